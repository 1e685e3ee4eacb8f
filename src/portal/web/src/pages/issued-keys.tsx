import { useState } from "preact/hooks";
import { type ApiKey, call, enc, q } from "../api.js";
import {
  Confirm,
  Empty,
  ErrorNote,
  Field,
  Loading,
  OnceSecret,
  Pager,
  Time,
  useAction,
  useLoad,
  usePager,
} from "../ui.js";
import { KeyFacts, stateBadge } from "./key-facts.js";
import { formatRateLimits, parseMetadata, parseRateLimits, parseScopes } from "./key-fields.js";

export function IssuedKeys() {
  const [showRevoked, setShowRevoked] = useState(false);
  const pager = usePager();
  const [fresh, setFresh] = useState<{ name: string; secret: string } | undefined>();
  const list = useLoad(
    () =>
      call<{ issued_api_keys: ApiKey[]; next_page_token: string }>(
        "GET",
        `/issuedApiKeys${q({ show_revoked: showRevoked ? "true" : undefined, page_size: 50, page_token: pager.token })}`,
      ),
    [showRevoked, pager.token],
  );
  const keys = list.data?.issued_api_keys ?? [];
  return (
    <>
      <CreateIssuedKey
        onCreated={(k) => {
          setFresh({ name: k.name, secret: k.secret ?? "" });
          list.reload();
        }}
      />
      {fresh !== undefined ? (
        <OnceSecret label={`Secret of ${fresh.name}`} value={fresh.secret}>
          Give it to the service that uses the key.
        </OnceSecret>
      ) : null}
      <div class="toolbar">
        <label class="check">
          <input
            type="checkbox"
            checked={showRevoked}
            onChange={(e) => {
              setShowRevoked(e.currentTarget.checked);
              pager.reset();
            }}
          />
          Show revoked keys
        </label>
      </div>
      <ErrorNote error={list.error} />
      {list.loading && list.data === undefined ? <Loading what="keys" /> : null}
      {list.data !== undefined && keys.length === 0 ? (
        <Empty title="No issued keys">Create one above; its secret is shown once.</Empty>
      ) : null}
      <ul class="cards" aria-label="Issued keys">
        {keys.map((k) => (
          <IssuedKeyRow
            key={k.key_id}
            k={k}
            onChanged={list.reload}
            onSecret={(name, secret) => setFresh({ name, secret })}
          />
        ))}
      </ul>
      <Pager
        page={pager.page}
        nextToken={list.data?.next_page_token ?? ""}
        onPrev={pager.prev}
        onNext={() => pager.next(list.data?.next_page_token ?? "")}
      />
    </>
  );
}

interface KeyDraft {
  name: string;
  actor: string;
  scopes: string;
  metadata: string;
  limits: string;
}

function KeyFields({ draft, set, withActor }: { draft: KeyDraft; set: (d: KeyDraft) => void; withActor: boolean }) {
  return (
    <>
      <Field label="Name">
        {(id) => (
          <input
            id={id}
            required
            maxLength={256}
            value={draft.name}
            onInput={(e) => set({ ...draft, name: e.currentTarget.value })}
          />
        )}
      </Field>
      {withActor ? (
        <Field label="Actor id" hint="Who the key acts for (a user or service); optional.">
          {(id, d) => (
            <input
              id={id}
              aria-describedby={d}
              value={draft.actor}
              onInput={(e) => set({ ...draft, actor: e.currentTarget.value })}
            />
          )}
        </Field>
      ) : null}
      <Field label="Scopes" hint="Separated by spaces or commas.">
        {(id, d) => (
          <input
            id={id}
            aria-describedby={d}
            value={draft.scopes}
            onInput={(e) => set({ ...draft, scopes: e.currentTarget.value })}
          />
        )}
      </Field>
      <Field label="Metadata (JSON object)" hint="Returned by verification.">
        {(id, d) => (
          <textarea
            id={id}
            class="mono"
            rows={3}
            aria-describedby={d}
            value={draft.metadata}
            onInput={(e) => set({ ...draft, metadata: e.currentTarget.value })}
          />
        )}
      </Field>
      <Field label="Rate limits" hint="One a line: name limit period, e.g. per_minute 100 60s.">
        {(id, d) => (
          <textarea
            id={id}
            class="mono"
            rows={2}
            aria-describedby={d}
            value={draft.limits}
            onInput={(e) => set({ ...draft, limits: e.currentTarget.value })}
          />
        )}
      </Field>
    </>
  );
}

const emptyDraft: KeyDraft = { name: "", actor: "", scopes: "", metadata: "", limits: "" };

function CreateIssuedKey({ onCreated }: { onCreated: (k: ApiKey) => void }) {
  const [draft, setDraft] = useState(emptyDraft);
  const [open, setOpen] = useState(false);
  const action = useAction();
  if (!open) {
    return (
      <div class="actions">
        <button type="button" onClick={() => setOpen(true)}>
          Create an issued key
        </button>
      </div>
    );
  }
  return (
    <form
      class="card grid-form"
      aria-label="Create an issued key"
      onSubmit={(e) => {
        e.preventDefault();
        action.run(async () => {
          const created = await call<ApiKey>("POST", "/issuedApiKeys", {
            name: draft.name.trim(),
            ...(draft.actor.trim() === "" ? {} : { actor_id: draft.actor.trim() }),
            scopes: parseScopes(draft.scopes),
            metadata: parseMetadata(draft.metadata),
            rate_limits: parseRateLimits(draft.limits),
          });
          setDraft(emptyDraft);
          setOpen(false);
          onCreated(created);
        });
      }}
    >
      <KeyFields draft={draft} set={setDraft} withActor />
      <div class="form-end span">
        <button type="submit" disabled={action.busy}>
          Create key
        </button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      <ErrorNote error={action.error} />
    </form>
  );
}

function IssuedKeyRow({
  k,
  onChanged,
  onSecret,
}: {
  k: ApiKey;
  onChanged: () => void;
  onSecret: (name: string, secret: string) => void;
}) {
  const [mode, setMode] = useState<"view" | "edit" | "rotate" | "revoke">("view");
  const [draft, setDraft] = useState<KeyDraft>({
    name: k.name,
    actor: k.actor_id ?? "",
    scopes: k.scopes.join(" "),
    metadata: Object.keys(k.metadata).length === 0 ? "" : JSON.stringify(k.metadata),
    limits: formatRateLimits(k.rate_limits),
  });
  const [grace, setGrace] = useState("3600");
  const [rotated, setRotated] = useState<string | undefined>();
  const action = useAction();
  const live = k.state !== "REVOKED";
  return (
    <li class="card">
      <div class="row">
        <div class="row-main">
          <span class="row-title">{k.name}</span> {stateBadge(k)}
          <KeyFacts k={k} />
          {rotated !== undefined ? (
            <span class="small" role="status">
              Rotated; the previous secret verifies until <Time iso={rotated} />.
            </span>
          ) : null}
        </div>
        {live ? (
          <div class="row-actions">
            <button
              type="button"
              class="secondary small"
              onClick={() => setMode(mode === "edit" ? "view" : "edit")}
              aria-label={`Edit ${k.name}`}
            >
              Edit
            </button>
            <button
              type="button"
              class="secondary small"
              onClick={() => setMode(mode === "rotate" ? "view" : "rotate")}
              aria-label={`Rotate ${k.name}`}
            >
              Rotate
            </button>
            <button
              type="button"
              class="danger small"
              onClick={() => setMode("revoke")}
              aria-label={`Revoke ${k.name}`}
            >
              Revoke
            </button>
          </div>
        ) : null}
      </div>
      {mode === "edit" ? (
        <form
          class="grid-form"
          aria-label={`Edit ${k.name}`}
          onSubmit={(e) => {
            e.preventDefault();
            action.run(async () => {
              await call(
                "PATCH",
                `/issuedApiKeys/${enc(k.key_id)}?update_mask=name,actor_id,scopes,metadata,rate_limits`,
                {
                  issued_api_key: {
                    name: draft.name.trim(),
                    actor_id: draft.actor.trim() === "" ? null : draft.actor.trim(),
                    scopes: parseScopes(draft.scopes),
                    metadata: parseMetadata(draft.metadata),
                    rate_limits: parseRateLimits(draft.limits),
                  },
                },
              );
              setMode("view");
              onChanged();
            });
          }}
        >
          <KeyFields draft={draft} set={setDraft} withActor />
          <div class="form-end span">
            <button type="submit" disabled={action.busy}>
              Save key
            </button>
            <button type="button" class="secondary" onClick={() => setMode("view")}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      {mode === "rotate" ? (
        <form
          class="inline-form"
          aria-label={`Rotate ${k.name}`}
          onSubmit={(e) => {
            e.preventDefault();
            action.run(async () => {
              const out = await call<ApiKey>("POST", `/issuedApiKeys/${enc(k.key_id)}:rotate`, {
                grace_period: `${grace}s`,
              });
              onSecret(k.name, out.secret ?? "");
              setRotated(out.previous_secret_expire_time);
              setMode("view");
              onChanged();
            });
          }}
        >
          <Field label="The previous secret keeps working for">
            {(id) => (
              <select id={id} value={grace} onChange={(e) => setGrace(e.currentTarget.value)}>
                <option value="0">no time: stop it now (leaked key)</option>
                <option value="300">5 minutes</option>
                <option value="3600">1 hour</option>
                <option value="86400">24 hours</option>
              </select>
            )}
          </Field>
          <button type="submit" disabled={action.busy}>
            Rotate secret
          </button>
        </form>
      ) : null}
      {mode === "revoke" ? (
        <Confirm
          title={`Revoke ${k.name}?`}
          confirmLabel="Revoke key"
          onClose={() => setMode("view")}
          onConfirm={async () => {
            await call("DELETE", `/issuedApiKeys/${enc(k.key_id)}`);
            onChanged();
          }}
        >
          <p>Verification answers REVOKED for this key from now on, with every secret it had. Revocation is final.</p>
        </Confirm>
      ) : null}
      <ErrorNote error={action.error} />
    </li>
  );
}
