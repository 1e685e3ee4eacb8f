import { useState } from "preact/hooks";
import { type Connection, call, enc, type GroupPatchResponse, type RequestLogMode } from "../api.js";
import { navigate } from "../router.js";
import { oneTime } from "../secrets.js";
import { ActionForm, SelectField, SubmitRow, TextField, useSave, CheckField } from "../fields.js";
import { ConfirmDelete } from "../confirm.js";
import { CopyField, ErrorNote, Time } from "../ui.js";
import { GuardSettings } from "./guard-settings.js";
import { WebhookSettings } from "./webhook-settings.js";

const REQUEST_LOG = [
  ["errors", "Failed requests (4xx, 5xx)"],
  ["all", "Every request"],
  ["off", "Off"],
] as const;
const GROUP_PATCH = [
  ["no_content", "204 No Content"],
  ["full", "200 with the whole group"],
] as const;
const UNKNOWN_EXTENSIONS = [
  ["reject", "is refused (400)"],
  ["store", "is stored as sent"],
] as const;

export function Settings({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  return (
    <>
      <div class="card">
        <CopyField label="SCIM base URL" value={conn.scim_base_url} />
        <p class="small muted">
          Client id <span class="mono">{conn.client_id}</span> · created <Time iso={conn.create_time} /> · updated{" "}
          <Time iso={conn.update_time} />
        </p>
      </div>
      <GeneralSettings conn={conn} onChanged={onChanged} />
      <WebhookSettings conn={conn} onChanged={onChanged} />
      <GuardSettings conn={conn} onChanged={onChanged} />
      <Extensions conn={conn} onChanged={onChanged} />
      <DeleteConnection conn={conn} />
    </>
  );
}

function GeneralSettings({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  const [name, setName] = useState(conn.name);
  const [tenant, setTenant] = useState(conn.tenant);
  const [product, setProduct] = useState(conn.product);
  const [autoLink, setAutoLink] = useState(conn.auto_link);
  const [requestLog, setRequestLog] = useState<RequestLogMode>(conn.request_log);
  const [groupPatch, setGroupPatch] = useState<GroupPatchResponse>(conn.group_patch_response);
  const action = useSave();
  const save = () =>
    action.run(async () => {
      const mask = "name,tenant,product,auto_link,request_log,group_patch_response";
      await call("PATCH", `/scimClients/${enc(conn.client_id)}?update_mask=${mask}`, {
        name: name.trim(),
        tenant: tenant.trim(),
        product: product.trim(),
        auto_link: autoLink,
        request_log: requestLog,
        group_patch_response: groupPatch,
      });
      onChanged();
    });
  return (
    <ActionForm class="card grid-form" aria-labelledby="general-h" onSubmit={save}>
      <h2 id="general-h" class="span">
        General
      </h2>
      <TextField label="Connection name" value={name} onInput={setName} maxLength={256} />
      <TextField
        label="Tenant"
        hint="Copied into every webhook of this connection, to route it in your application."
        value={tenant}
        onInput={setTenant}
        maxLength={256}
      />
      <TextField
        label="Product"
        hint="Copied into every webhook, like tenant."
        value={product}
        onInput={setProduct}
        maxLength={256}
      />
      <SelectField
        label="SCIM request log"
        hint="What the SCIM requests tab keeps of this connection's requests, with bodies."
        value={requestLog}
        options={REQUEST_LOG}
        onChange={setRequestLog}
      />
      <SelectField
        label="Group PATCH answer"
        hint="Okta and Entra ID need no body: 204 keeps a membership change of a large group cheap."
        value={groupPatch}
        options={GROUP_PATCH}
        onChange={setGroupPatch}
      />
      <CheckField checked={autoLink} onChange={setAutoLink} span>
        Auto-link: a user created with the userName or email of an existing identity of this organization is linked to
        it instead of refused as a duplicate.
      </CheckField>
      <SubmitRow label="Save settings" busy={action.busy} saved={action.saved} span />
      <ErrorNote error={action.error} />
    </ActionForm>
  );
}

function DeleteConnection({ conn }: { conn: Connection }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <div class="card danger-zone">
      <h2>Delete this connection</h2>
      <p>The identity provider can no longer push to it. Users and groups it synced stay in the organization.</p>
      <button type="button" class="danger" onClick={() => setConfirming(true)}>
        Delete connection
      </button>
      {confirming ? (
        <ConfirmDelete
          title={`Delete ${conn.name === "" ? conn.client_id : conn.name}?`}
          confirmLabel="Delete connection"
          path={`/scimClients/${enc(conn.client_id)}`}
          onDeleted={() => {
            oneTime.drop(conn.client_id);
            navigate(`/organizations/${enc(conn.organization_id)}`);
          }}
          onClose={() => setConfirming(false)}
        >
          <p>This removes the connection, its SCIM secret, its webhook settings, pending webhooks and its event log.</p>
          <p>Users and groups it pushed stay in the organization.</p>
        </ConfirmDelete>
      ) : null}
    </div>
  );
}

/** SCIM schema extensions the connection declares (validated by the server) and what happens to undeclared ones. */
function Extensions({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  const [text, setText] = useState(conn.extensions.length === 0 ? "[]" : JSON.stringify(conn.extensions, null, 2));
  const [unknown, setUnknown] = useState(conn.unknown_extensions);
  const action = useSave();
  const save = () =>
    action.run(async () => {
      let extensions: unknown;
      try {
        extensions = JSON.parse(text);
      } catch (err) {
        throw new Error(`not JSON: ${err instanceof Error ? err.message : String(err)}`);
      }
      await call("PATCH", `/scimClients/${enc(conn.client_id)}?update_mask=extensions,unknown_extensions`, {
        extensions,
        unknown_extensions: unknown,
      });
      onChanged();
    });
  return (
    <ActionForm class="card" aria-labelledby="extensions-h" onSubmit={save}>
      <h2 id="extensions-h">SCIM schema extensions</h2>
      <p class="hint">
        {conn.extensions.length === 0
          ? "None declared: users carry only the core and enterprise schemas."
          : `Declared: ${conn.extensions.map((x) => (x as { schema?: string }).schema ?? "?").join(", ")}.`}
      </p>
      <TextField
        label="Declarations (JSON array)"
        hint="Each with schema (a URN), name, resource User and attributes; Roster checks them when you save."
        error={action.error}
        rows={6}
        mono
        value={text}
        onInput={setText}
      />
      <SelectField
        label="A body with an undeclared schema URN"
        value={unknown}
        options={UNKNOWN_EXTENSIONS}
        onChange={setUnknown}
      />
      <SubmitRow label="Save extensions" busy={action.busy} saved={action.saved} />
    </ActionForm>
  );
}
