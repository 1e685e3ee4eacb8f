import { type Connection, call, enc, type Organization } from "../api.js";
import { Link } from "../router.js";
import { ErrorNote, Loading, Tabs, Time, useLoad } from "../ui.js";
import { Settings } from "./connection-settings.js";
import { DeprovisioningGuardPanel } from "./deprovisioning-guard.js";
import { EventsTab } from "./events.js";
import { MappingTab } from "./mapping.js";
import { RequestsTab } from "./requests.js";
import { SetupGuide } from "./setup-guide.js";

export type ConnectionTab = "setup" | "settings" | "events" | "requests" | "mapping";

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
        <>
          <Health conn={c} />
          <DeprovisioningGuardPanel conn={c} onChanged={conn.reload} />
          <p class="small">
            Synced users and groups live in the organization's directory:{" "}
            <Link href={`/organizations/${enc(c.organization_id)}/users`}>users</Link> ·{" "}
            <Link href={`/organizations/${enc(c.organization_id)}/groups`}>groups</Link> ·{" "}
            <Link href={`/organizations/${enc(c.organization_id)}/events?directory_id=${enc(c.client_id)}`}>
              events feed
            </Link>
          </p>
        </>
      )}
      <Tabs
        label="Connection"
        current={tab}
        tabs={[
          ["setup", base, "Setup guide"],
          ["settings", `${base}/settings`, "Settings"],
          ["events", `${base}/events`, "Webhook events"],
          ["requests", `${base}/requests`, "SCIM requests"],
          ["mapping", `${base}/mapping`, "Data mapping"],
        ]}
      />
      {c === undefined ? (
        conn.loading ? (
          <Loading what="the connection" />
        ) : null
      ) : (
        <>
          {tab === "setup" ? <SetupGuide conn={c} onChanged={conn.reload} /> : null}
          {tab === "settings" ? <Settings conn={c} onChanged={conn.reload} /> : null}
          {tab === "events" ? <EventsTab conn={c} /> : null}
          {tab === "requests" ? <RequestsTab conn={c} /> : null}
          {tab === "mapping" ? <MappingTab conn={c} onSaved={conn.reload} /> : null}
        </>
      )}
    </section>
  );
}

/** Whether the identity provider is reaching Roster: its last request and the last 24 hours' counts. */
function Health({ conn }: { conn: Connection }) {
  if (conn.request_count_24h === undefined) return null;
  const errors = conn.error_count_24h ?? 0;
  return (
    <dl class="health" aria-label="Connection health">
      <div>
        <dt>Last SCIM request</dt>
        <dd>
          {conn.last_request_time === null || conn.last_request_time === undefined ? (
            "none yet"
          ) : (
            <Time iso={conn.last_request_time} />
          )}
        </dd>
      </div>
      <div>
        <dt>Requests, last 24 h</dt>
        <dd>{conn.request_count_24h}</dd>
      </div>
      <div>
        <dt>Errors, last 24 h</dt>
        <dd>
          {errors === 0 ? (
            "0"
          ) : (
            <>
              <span class="bad-text">{errors}</span> ·{" "}
              <Link href={`/connections/${enc(conn.client_id)}/requests`}>see the request log</Link>
            </>
          )}
        </dd>
      </div>
    </dl>
  );
}
