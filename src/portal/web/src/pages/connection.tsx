import { useState } from "preact/hooks";
import { type Connection, call, enc, type Organization } from "../api.js";
import { Link, navigate } from "../router.js";
import { oneTime } from "../secrets.js";
import {
  Confirm,
  CopyField,
  ErrorNote,
  Field,
  Loading,
  OnceSecret,
  randomSecret,
  Time,
  useAction,
  useLoad,
} from "../ui.js";
import { EventsTab } from "./events.js";
import { MappingTab } from "./mapping.js";
import { SetupGuide } from "./setup-guide.js";

export type ConnectionTab = "setup" | "settings" | "events" | "mapping";

export function ConnectionPage({ clientId, tab }: { clientId: string; tab: ConnectionTab }) {
  const conn = useLoad(() => call<Connection>("GET", `/scimClients/${enc(clientId)}`), [clientId]);
  const c = conn.data;
  const orgId = c?.organization_id;
  const org = useLoad(
    () =>
      orgId === undefined ? Promise.resolve(undefined) : call<Organization>("GET", `/organizations/${enc(orgId)}`),
    [orgId],
  );
  const base = `/connections/${enc(clientId)}`;
  return (
    <section>
      <nav aria-label="Breadcrumb" class="crumbs">
        <Link href="/organizations">Organizations</Link> <span aria-hidden="true">/</span>{" "}
        {c === undefined ? null : (
          <>
            <Link href={`/organizations/${enc(c.organization_id)}`}>{org.data?.name ?? "Organization"}</Link>{" "}
            <span aria-hidden="true">/</span>
          </>
        )}
      </nav>
      <h1>{c === undefined ? "Connection" : c.name === "" ? c.client_id : c.name}</h1>
      <ErrorNote error={conn.error} />
      {c === undefined ? null : (
        <p class="small">
          Synced users and groups live in the organization's directory:{" "}
          <Link href={`/organizations/${enc(c.organization_id)}/users`}>users</Link> ·{" "}
          <Link href={`/organizations/${enc(c.organization_id)}/groups`}>groups</Link>
        </p>
      )}
      <nav class="tabs" aria-label="Connection">
        <Link href={base} aria-current={tab === "setup" ? "page" : undefined}>
          Setup guide
        </Link>
        <Link href={`${base}/settings`} aria-current={tab === "settings" ? "page" : undefined}>
          Settings
        </Link>
        <Link href={`${base}/events`} aria-current={tab === "events" ? "page" : undefined}>
          Events
        </Link>
        <Link href={`${base}/mapping`} aria-current={tab === "mapping" ? "page" : undefined}>
          Data mapping
        </Link>
      </nav>
      {c === undefined ? (
        conn.loading ? (
          <Loading what="the connection" />
        ) : null
      ) : (
        <>
          {tab === "setup" ? <SetupGuide conn={c} /> : null}
          {tab === "settings" ? <Settings conn={c} onChanged={conn.reload} /> : null}
          {tab === "events" ? <EventsTab conn={c} /> : null}
          {tab === "mapping" ? <MappingTab conn={c} onSaved={conn.reload} /> : null}
        </>
      )}
    </section>
  );
}

function Settings({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
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
      <DeleteConnection conn={conn} />
    </>
  );
}

function GeneralSettings({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  const [name, setName] = useState(conn.name);
  const [tenant, setTenant] = useState(conn.tenant);
  const [product, setProduct] = useState(conn.product);
  const [autoLink, setAutoLink] = useState(conn.auto_link);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  return (
    <form
      class="card grid-form"
      aria-labelledby="general-h"
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(false);
        action.run(async () => {
          await call("PATCH", `/scimClients/${enc(conn.client_id)}?update_mask=name,tenant,product,auto_link`, {
            name: name.trim(),
            tenant: tenant.trim(),
            product: product.trim(),
            auto_link: autoLink,
          });
          setSaved(true);
          onChanged();
        });
      }}
    >
      <h2 id="general-h" class="span">
        General
      </h2>
      <Field label="Connection name">
        {(id) => <input id={id} maxLength={256} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <Field label="Tenant" hint="Copied into every webhook of this connection, to route it in your application.">
        {(id, d) => (
          <input
            id={id}
            aria-describedby={d}
            maxLength={256}
            value={tenant}
            onInput={(e) => setTenant(e.currentTarget.value)}
          />
        )}
      </Field>
      <Field label="Product" hint="Copied into every webhook, like tenant.">
        {(id, d) => (
          <input
            id={id}
            aria-describedby={d}
            maxLength={256}
            value={product}
            onInput={(e) => setProduct(e.currentTarget.value)}
          />
        )}
      </Field>
      <div class="field span">
        <label class="check">
          <input type="checkbox" checked={autoLink} onChange={(e) => setAutoLink(e.currentTarget.checked)} />
          Auto-link: a user created with the userName or email of an existing identity of this organization is linked to
          it instead of refused as a duplicate.
        </label>
      </div>
      <div class="form-end span">
        <button type="submit" disabled={action.busy}>
          Save settings
        </button>
        {saved && action.error === undefined ? <span role="status">Saved.</span> : null}
      </div>
      <ErrorNote error={action.error} />
    </form>
  );
}

function WebhookSettings({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  const [url, setUrl] = useState(conn.webhook?.url ?? "");
  const [logEvents, setLogEvents] = useState(conn.log_webhook_events);
  const [generated, setGenerated] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const secretSet = conn.webhook?.secret_set === true;
  const save = (secret: string | undefined) =>
    action.run(async () => {
      setSaved(false);
      const trimmed = url.trim();
      const mask = secret === undefined ? "webhook.url,log_webhook_events" : "webhook,log_webhook_events";
      const webhook = trimmed === "" ? null : secret === undefined ? { url: trimmed } : { url: trimmed, secret };
      await call("PATCH", `/scimClients/${enc(conn.client_id)}?update_mask=${mask}`, {
        webhook,
        log_webhook_events: logEvents,
      });
      if (secret !== undefined) setGenerated(secret);
      setSaved(true);
      onChanged();
    });
  return (
    <form
      class="card"
      aria-labelledby="webhook-h"
      onSubmit={(e) => {
        e.preventDefault();
        save(undefined);
      }}
    >
      <h2 id="webhook-h">Webhook</h2>
      <p class="hint">
        Roster posts every directory change of this connection to this URL, signed with the webhook secret.
      </p>
      <Field
        label="Webhook URL"
        hint="http(s) URL of your endpoint; leave empty to send no webhooks."
        error={action.error}
      >
        {(id, d) => (
          <input
            id={id}
            type="url"
            inputMode="url"
            aria-describedby={d}
            aria-invalid={action.error !== undefined}
            value={url}
            placeholder="https://app.example.com/webhooks/roster"
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        )}
      </Field>
      <div class="field">
        <label class="check">
          <input type="checkbox" checked={logEvents} onChange={(e) => setLogEvents(e.currentTarget.checked)} />
          Keep a log of every delivery attempt (shown under Events, with resend)
        </label>
      </div>
      {conn.webhook !== null && !secretSet ? (
        <p class="warning" role="alert">
          This webhook URL has no secret: Roster never sends an unsigned webhook, so every delivery fails until you save
          it with a generated secret.
        </p>
      ) : null}
      {conn.webhook !== null && secretSet ? (
        <p class="small muted">A webhook secret is set (it is never shown again).</p>
      ) : null}
      <div class="form-end">
        <button type="submit" disabled={action.busy}>
          Save webhook
        </button>
        <button
          type="button"
          class="secondary"
          disabled={action.busy || url.trim() === ""}
          onClick={() => save(`whsec_${randomSecret(32)}`)}
        >
          {secretSet ? "Save with a new secret" : "Save with a generated secret"}
        </button>
        {saved && action.error === undefined ? <span role="status">Saved.</span> : null}
      </div>
      {generated !== undefined ? (
        <OnceSecret label="Webhook secret" value={generated}>
          Configure it in your endpoint to verify the signature.
        </OnceSecret>
      ) : null}
    </form>
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
        <Confirm
          title={`Delete ${conn.name === "" ? conn.client_id : conn.name}?`}
          confirmLabel="Delete connection"
          onClose={() => setConfirming(false)}
          onConfirm={async () => {
            await call("DELETE", `/scimClients/${enc(conn.client_id)}`);
            oneTime.drop(conn.client_id);
            navigate(`/organizations/${enc(conn.organization_id)}`);
          }}
        >
          <p>This removes the connection, its SCIM secret, its webhook settings, pending webhooks and its event log.</p>
          <p>Users and groups it pushed stay in the organization.</p>
        </Confirm>
      ) : null}
    </div>
  );
}
