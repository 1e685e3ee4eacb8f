import { useState } from "preact/hooks";
import { AdminApiError, call, token } from "../api.js";
import { Field } from "../fields.js";
import { messageOf } from "../ui.js";

/** The admin token is checked against the API before it is kept, and kept only in this tab's sessionStorage. */
export function SignInPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="sign-in">
      <h1>Roster admin portal</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(undefined);
          const candidate = value.trim();
          try {
            await call("GET", "/organizations?page_size=1", undefined, candidate);
            token.set(candidate);
            setValue("");
            onSignedIn();
          } catch (err) {
            token.clear();
            setError(
              err instanceof AdminApiError && err.httpStatus === 401
                ? "That admin token is wrong: Roster refused it. Use the token printed on Roster's first start (or ROSTER_ADMIN_TOKEN)."
                : messageOf(err),
            );
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field
          label="Admin token"
          hint="Kept in this browser tab only (sessionStorage) and sent to this Roster's admin API; closing the tab forgets it."
          error={error}
        >
          {(id, describedBy) => (
            <input
              id={id}
              type="password"
              autoComplete="off"
              spellcheck={false}
              required
              aria-invalid={error !== undefined}
              aria-describedby={describedBy}
              value={value}
              onInput={(e) => setValue(e.currentTarget.value)}
            />
          )}
        </Field>
        <button type="submit" disabled={busy || value.trim() === ""}>
          {busy ? "Checking…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
