import { useState } from "preact/hooks";
import { type Connection, call, enc } from "../api.js";
import { ActionForm, Field, SubmitRow, useSave, CheckField } from "../fields.js";
import { ErrorNote } from "../ui.js";

/** A whole number typed in a field, or undefined when it is not one within [min, max]. */
function wholeIn(text: string, min: number, max: number): number | undefined {
  const n = Number(text.trim());
  return text.trim() !== "" && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}

function NumberField(props: {
  label: string;
  hint: string;
  value: string;
  min: number;
  max: number;
  onInput: (v: string) => void;
}) {
  return (
    <Field label={props.label} hint={props.hint}>
      {(id, d) => (
        <input
          id={id}
          type="number"
          inputMode="numeric"
          min={props.min}
          max={props.max}
          step={1}
          required
          aria-describedby={d}
          value={props.value}
          onInput={(e) => props.onInput(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/**
 * The connection's deprovisioning guard settings (docs/deprovisioning.md): on or off, and the two limits and the
 * window over which a connection's deactivations and deletions are counted. Saved with the guard's PATCH; the
 * server checks the ranges too.
 */
export function GuardSettings({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  const g = conn.deprovisioning_guard;
  const [enabled, setEnabled] = useState(g?.enabled ?? true);
  const [share, setShare] = useState(String(g?.share_percent ?? 20));
  const [count, setCount] = useState(String(g?.min_count ?? 50));
  const [minutes, setMinutes] = useState(String(Math.round((g?.window_seconds ?? 3600) / 60)));
  const action = useSave();
  if (g === undefined) return null;
  const save = () =>
    action.run(async () => {
      const sharePercent = wholeIn(share, 1, 100);
      const minCount = wholeIn(count, 1, 1_000_000);
      const windowMinutes = wholeIn(minutes, 1, 10_080);
      if (sharePercent === undefined || minCount === undefined || windowMinutes === undefined) {
        throw new Error("The share is 1 to 100 %, the count 1 to 1 000 000 users, the window 1 to 10 080 minutes.");
      }
      await call("PATCH", `/scimClients/${enc(conn.client_id)}/deprovisioningGuard`, {
        enabled,
        share_percent: sharePercent,
        min_count: minCount,
        window_seconds: windowMinutes * 60,
      });
      onChanged();
    });
  return (
    <ActionForm class="card grid-form" aria-labelledby="guard-h" onSubmit={save}>
      <h2 id="guard-h" class="span">
        Deprovisioning guard
      </h2>
      <p class="hint span">
        When this connection deactivates or deletes more users within the window than both limits allow, Roster keeps
        answering the identity provider but holds the effects (events, webhooks, API key suspension) until an admin
        releases or discards them.
      </p>
      <CheckField checked={enabled} onChange={setEnabled} span>
        Hold mass deprovisioning (guard on)
      </CheckField>
      {[
        {
          label: "Share of active users (%)",
          hint: "Holds only above this share of the organization's active users…",
          value: share,
          max: 100,
          onInput: setShare,
        },
        { label: "Users", hint: "…and above this many users.", value: count, max: 1_000_000, onInput: setCount },
        {
          label: "Window (minutes)",
          hint: "The rolling window the changes are counted over.",
          value: minutes,
          max: 10_080,
          onInput: setMinutes,
        },
      ].map((field) => (
        <NumberField key={field.label} min={1} {...field} />
      ))}
      <ErrorNote error={action.error} />
      <SubmitRow label="Save guard" busy={action.busy} saved={action.saved} span />
    </ActionForm>
  );
}
