import { call, enc, setUnauthenticatedHandler, setupSession, type DirectoryGroup, type DirectoryUser } from "../api.js";
import { Frame, type RouteTable, Routes } from "../frame.js";
import { LinksContext, SETUP_LINKS } from "../links.js";
import type { Location } from "../router.js";
import { ErrorNote, ListStatus, Loading, Time, useLoad } from "../ui.js";
import { useState } from "preact/hooks";
import { ConnectionPage } from "./connection.js";
import { GroupsTable, UsersTable } from "./directory.js";
import { Connections } from "./organization.js";

/** What `GET /setupSession` tells the view. */
interface SetupSessionInfo {
  organization_id: string;
  organization_name: string;
  expire_time: string;
  return_url: string | null;
  csrf_token: string;
  max_connections: number;
}

/** The view a setup link opens lives below /portal/setup; the link itself is exchanged by the server first. */
export const isSetupPath = (path: string): boolean => path === "/setup" || path.startsWith("/setup/");

const routes = (s: SetupSessionInfo): RouteTable => [
  ["/setup", () => <SetupHome session={s} />],
  ["/setup/connections/:client", (p) => <ConnectionPage clientId={p.client ?? ""} tab="setup" restricted />],
  [
    "/setup/connections/:client/requests",
    (p) => <ConnectionPage clientId={p.client ?? ""} tab="requests" restricted />,
  ],
];

/**
 * A customer's IT admin, holding a setup link: only the organization's SCIM connections, with the session's cookie
 * instead of an admin token, no navigation to anything else, and "Done" back to the application that sent the link.
 */
export function SetupApp({ loc }: { loc: Location }) {
  const [ended, setEnded] = useState(false);
  const session = useLoad(async () => {
    setupSession.enter();
    setUnauthenticatedHandler(() => setEnded(true));
    const s = await call<SetupSessionInfo>("GET", "/setupSession");
    setupSession.setCsrf(s.csrf_token);
    return s;
  }, []);
  const s = session.data;
  if (ended) return <SessionEnded />;
  const header = (
    <>
      <span class="brand">Roster</span>
      <span class="grow">{s === undefined ? "Directory setup" : `Directory setup for ${s.organization_name}`}</span>
      {s?.return_url == null ? null : (
        <a class="button secondary small" href={s.return_url}>
          Done
        </a>
      )}
    </>
  );
  return (
    <LinksContext.Provider value={SETUP_LINKS}>
      <Frame path={loc.path} header={header}>
        <ErrorNote error={session.error} />
        {s === undefined ? (
          session.loading ? (
            <Loading what="the setup session" />
          ) : null
        ) : (
          <Routes routes={routes(s)} path={loc.path} />
        )}
      </Frame>
    </LinksContext.Provider>
  );
}

function SessionEnded() {
  return (
    <main id="main" class="sign-in">
      <h1>This setup session has ended</h1>
      <p>
        Open the setup link you were sent again. If it has expired or was revoked, ask the person who sent it — the team
        of the application you are connecting — for a new one.
      </p>
    </main>
  );
}

function SetupHome({ session }: { session: SetupSessionInfo }) {
  return (
    <section>
      <h1>Connect {session.organization_name}'s identity provider</h1>
      <p class="lead">
        Create a connection, choose your identity provider, and enter the values of its setup guide in that provider's
        console. This page shows when its first request arrives, and what it sent since.
      </p>
      <p class="small muted">
        This setup link works until <Time iso={session.expire_time} />.{" "}
        {session.return_url === null ? "Close this tab when you are done." : "Choose Done when you are finished."}
      </p>
      <Connections orgId={session.organization_id} max={session.max_connections} />
      <DirectorySample orgId={session.organization_id} />
    </section>
  );
}

/** How many users and groups the connections have pushed so far, and the first few of each. */
const SAMPLE = 5;

function DirectorySample({ orgId }: { orgId: string }) {
  type Page<K extends string, T> = { [k in K]: T[] } & { total_size?: number };
  const base = `/organizations/${enc(orgId)}`;
  const users = useLoad(() => call<Page<"users", DirectoryUser>>("GET", `${base}/users?page_size=${SAMPLE}`), [base]);
  const groups = useLoad(
    () => call<Page<"groups", DirectoryGroup>>("GET", `${base}/groups?page_size=${SAMPLE}`),
    [base],
  );
  const u = users.data?.users ?? [];
  const g = groups.data?.groups ?? [];
  return (
    <>
      <h2>Synced so far</h2>
      <p class="hint">The first {SAMPLE} of each, as your identity provider pushed them.</p>
      <h3>Users: {users.data?.total_size ?? "…"}</h3>
      <ListStatus load={users} what="users" items={u} emptyTitle="No users yet">
        Assign people to the app in your identity provider.
      </ListStatus>
      {u.length > 0 ? <UsersTable orgId={orgId} users={u} /> : null}
      <h3>Groups: {groups.data?.total_size ?? "…"}</h3>
      <ListStatus load={groups} what="groups" items={g} emptyTitle="No groups yet">
        Push groups from your identity provider, if you use them.
      </ListStatus>
      {g.length > 0 ? <GroupsTable orgId={orgId} groups={g} /> : null}
    </>
  );
}
