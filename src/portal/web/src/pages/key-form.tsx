import { TextField } from "../fields.js";

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
  const bind = (key: keyof KeyDraft) => ({ value: draft[key], onInput: (v: string) => set({ ...draft, [key]: v }) });
  return (
    <>
      <TextField label="Name" required maxLength={256} {...bind("name")} />
      {withOrg ? (
        <TextField
          label="Organization id"
          hint="Optional. With an actor id that is a user of this organization, the key follows that person: suspended while they are inactive, revoked when they are deleted."
          mono
          {...bind("org")}
        />
      ) : null}
      <TextField label="Actor id" hint="Who the key acts for (a user or service); optional." {...bind("actor")} />
      <TextField label="Scopes" hint="Separated by spaces or commas." {...bind("scopes")} />
      <TextField label="Metadata (JSON object)" hint="Returned by verification." rows={3} mono {...bind("metadata")} />
      <TextField
        label="Rate limits"
        hint="One a line: name limit period, e.g. per_minute 100 60s."
        rows={2}
        mono
        {...bind("limits")}
      />
    </>
  );
}

export const emptyDraft: KeyDraft = { name: "", org: "", actor: "", scopes: "", metadata: "", limits: "" };
