import { type Connection, call, enc, type Organization } from "../api.js";
import { useLinks } from "../links.js";
import { Link } from "../router.js";
import { ErrorNote, Loading, Tabs, Time, useLoad } from "../ui.js";
import { Settings } from "./connection-settings.js";
import { ConnectionState } from "./connection-state.js";
import { DeprovisioningGuardPanel } from "./deprovisioning-guard.js";
import { EventsTab } from "./events.js";
import { MappingTab } from "./mapping.js";
import { RequestsTab } from "./requests.js";
import { SetupGuide } from "./setup-guide.js";

export type ConnectionTab = "setup" | "settings" | "events" | "requests" | "mapping";

const TABS: readonly (readonly [ConnectionTab, string, string])[] = [
  ["setup", "", "Setup guide"],
  ["settings", "/settings", "Settings"],
  ["events", "/events", "Webhook events"],
  ["requests", "/requests", "SCIM requests"],
  ["mapping", "/mapping", "Data mapping"],
];
/** What a setup link's view shows of a connection: no settings, webhooks or mapping. */
const SETUP_TABS: ReadonlySet<ConnectionTab> = new Set(["setup", "requests"]);

/**
 * One connection with its health and tabs. `restricted` is a setup link's view: its organization is known from the
 * session, so the page reads nothing of the organization and offers only the setup guide and the request log.
 */
export function ConnectionPage(props: { clientId: string; tab: ConnectionTab; restricted?: boolean }) {
  const { clientId, tab } = props;
  const restricted = props.restricted === true;
  const links = useLinks();
  const conn = useLoad(() => call<Connection>("GET", `/scimClients/${enc(clientId)}`), [clientId]);
  const c = conn.data;
  const orgId = restricted ? undefined : c?.organization_id;
  const org = useLoad(
    () =>
      orgId === undefined ? Promise.resolve(undefined) : call<Organization>("GET", `/organizations/${enc(orgId)}`),
    [orgId],
  );
  const base = links.connection(clientId);
  return (
    <section>
      <nav aria-label="Breadcrumb" class="crumbs">
        <Link href={links.home}>{restricted ? "Connections" : "Organizations"}</Link> <span aria-hidden="true">/</span>{" "}
        {c === undefined || restricted ? null : (
          <>
            <Link href={`/organizations/${enc(c.organization_id)}`}>{org.data?.name ?? "Organization"}</Link>{" "}
            <span aria-hidden="true">/</span>
          </>
        )}
      </nav>
      <h1>{c === undefined ? "Connection" : c.name === "" ? c.client_id : c.name}</h1>
      <ErrorNote error={conn.error} />
      {c !== undefined && restricted ? (
        <>
          <ConnectionState conn={c} onCheck={conn.reload} />
          <Health conn={c} />
        </>
      ) : null}
      {c === undefined || restricted ? null : (
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
        tabs={TABS.filter(([key]) => !restricted || SETUP_TABS.has(key)).map(([key, sub, text]) => [
          key,
          `${base}${sub}`,
          text,
        ])}
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
export function Health({ conn }: { conn: Connection }) {
  const links = useLinks();
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
              <Link href={links.requests(conn.client_id)}>see the request log</Link>
            </>
          )}
        </dd>
      </div>
    </dl>
  );
}
