import { Field } from "../fields.js";

export interface KeyDraft {
  name: string;
  /** Create only: the organization whose identity `actor` names, so the key follows that person. */
  org: string;
  actor: string;
  scopes: string;
  metadata: string;
  limits: string;
}

export function KeyFields({ draft, set, withOrg }: { draft: KeyDraft; set: (d: KeyDraft) => void; withOrg: boolean }) {
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
      {withOrg ? (
        <Field
          label="Organization id"
          hint="Optional. With an actor id that is a user of this organization, the key follows that person: suspended while they are inactive, revoked when they are deleted."
        >
          {(id, d) => (
            <input
              id={id}
              class="mono"
              aria-describedby={d}
              value={draft.org}
              onInput={(e) => set({ ...draft, org: e.currentTarget.value })}
            />
          )}
        </Field>
      ) : null}
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

export const emptyDraft: KeyDraft = { name: "", org: "", actor: "", scopes: "", metadata: "", limits: "" };
