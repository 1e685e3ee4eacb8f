import { useState } from "preact/hooks";
import { type ApiKey, call, enc } from "../api.js";
import { RowButton, SelectField, ActionForm, SubmitRow } from "../fields.js";
import { ConfirmDelete } from "../confirm.js";
import { ErrorNote, Time, useAction } from "../ui.js";
import { KeyFacts, stateBadge } from "./key-facts.js";
import { formatRateLimits, parseMetadata, parseRateLimits, parseScopes } from "./key-fields.js";
import { type KeyDraft, KeyFields } from "./key-form.js";

const KEY_GRACE = [
  ["0", "no time: stop it now (leaked key)"],
  ["300", "5 minutes"],
  ["3600", "1 hour"],
  ["86400", "24 hours"],
] as const;

export function IssuedKeyRow({
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
    org: k.organization_id ?? "",
    actor: k.actor_id ?? "",
    scopes: k.scopes.join(" "),
    metadata: Object.keys(k.metadata).length === 0 ? "" : JSON.stringify(k.metadata),
    limits: formatRateLimits(k.rate_limits),
  });
  const [grace, setGrace] = useState("3600");
  const [rotated, setRotated] = useState<string | undefined>();
  const action = useAction();
  const live = k.state !== "REVOKED";
  const saveEdit = () =>
    action.run(async () => {
      await call("PATCH", `/issuedApiKeys/${enc(k.key_id)}?update_mask=name,actor_id,scopes,metadata,rate_limits`, {
        issued_api_key: {
          name: draft.name.trim(),
          actor_id: draft.actor.trim() === "" ? null : draft.actor.trim(),
          scopes: parseScopes(draft.scopes),
          metadata: parseMetadata(draft.metadata),
          rate_limits: parseRateLimits(draft.limits),
        },
      });
      setMode("view");
      onChanged();
    });
  const rotate = () =>
    action.run(async () => {
      const out = await call<ApiKey>("POST", `/issuedApiKeys/${enc(k.key_id)}:rotate`, {
        grace_period: `${grace}s`,
      });
      onSecret(k.name, out.secret ?? "");
      setRotated(out.previous_secret_expire_time);
      setMode("view");
      onChanged();
    });
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
            <RowButton label={`Edit ${k.name}`} onClick={() => setMode(mode === "edit" ? "view" : "edit")}>
              Edit
            </RowButton>
            <RowButton label={`Rotate ${k.name}`} onClick={() => setMode(mode === "rotate" ? "view" : "rotate")}>
              Rotate
            </RowButton>
            <RowButton label={`Revoke ${k.name}`} danger onClick={() => setMode("revoke")}>
              Revoke
            </RowButton>
          </div>
        ) : null}
      </div>
      {mode === "edit" ? (
        <ActionForm class="grid-form" aria-label={`Edit ${k.name}`} onSubmit={saveEdit}>
          <KeyFields draft={draft} set={setDraft} withOrg={false} />
          <SubmitRow label="Save key" busy={action.busy} span>
            <button type="button" class="secondary" onClick={() => setMode("view")}>
              Cancel
            </button>
          </SubmitRow>
        </ActionForm>
      ) : null}
      {mode === "rotate" ? (
        <ActionForm class="inline-form" aria-label={`Rotate ${k.name}`} onSubmit={rotate}>
          <SelectField
            label="The previous secret keeps working for"
            value={grace}
            options={KEY_GRACE}
            onChange={setGrace}
          />
          <button type="submit" disabled={action.busy}>
            Rotate secret
          </button>
        </ActionForm>
      ) : null}
      {mode === "revoke" ? (
        <ConfirmDelete
          title={`Revoke ${k.name}?`}
          confirmLabel="Revoke key"
          path={`/issuedApiKeys/${enc(k.key_id)}`}
          onDeleted={onChanged}
          onClose={() => setMode("view")}
        >
          <p>Verification answers REVOKED for this key from now on, with every secret it had. Revocation is final.</p>
        </ConfirmDelete>
      ) : null}
      <ErrorNote error={action.error} />
    </li>
  );
}
