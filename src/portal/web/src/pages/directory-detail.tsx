import { call, type DirectoryGroup, type DirectoryUser, enc } from "../api.js";
import { Link } from "../router.js";
import { Empty, ErrorNote, Json, Loading, Time, useLoad } from "../ui.js";

function Crumbs({ orgId, section }: { orgId: string; section: "users" | "groups" }) {
  return (
    <nav aria-label="Breadcrumb" class="crumbs">
      <Link href="/organizations">Organizations</Link> <span aria-hidden="true">/</span>{" "}
      <Link href={`/organizations/${enc(orgId)}/${section}`}>{section === "users" ? "Users" : "Groups"}</Link>{" "}
      <span aria-hidden="true">/</span>
    </nav>
  );
}

export function UserDetail({ orgId, id }: { orgId: string; id: string }) {
  const user = useLoad(() => call<DirectoryUser>("GET", `/organizations/${enc(orgId)}/users/${enc(id)}`), [orgId, id]);
  const u = user.data;
  return (
    <section>
      <Crumbs orgId={orgId} section="users" />
      <h1>{u?.user_name ?? "User"}</h1>
      <ErrorNote error={user.error} />
      {u === undefined ? (
        user.loading ? (
          <Loading what="the user" />
        ) : null
      ) : (
        <>
          <dl class="facts card">
            <dt>Id</dt>
            <dd class="mono wrap">{u.id}</dd>
            <dt>Active</dt>
            <dd>{u.active ? "yes" : "no"}</dd>
            <dt>Email</dt>
            <dd class="wrap">{u.email ?? "—"}</dd>
            <dt>externalId</dt>
            <dd class="wrap">{u.external_id ?? "—"}</dd>
            <dt>Password</dt>
            <dd>{u.has_password === true ? "set by the identity provider" : "none"}</dd>
            <dt>Created</dt>
            <dd>
              <Time iso={u.create_time} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time iso={u.update_time} />
            </dd>
          </dl>
          <h2>Groups</h2>
          {u.groups.length === 0 ? (
            <Empty title="Member of no group">
              Groups the identity provider pushes with this user as a member appear here.
            </Empty>
          ) : (
            <ul class="plain">
              {u.groups.map((g) => (
                <li key={g.id}>
                  <Link href={`/organizations/${enc(orgId)}/groups/${enc(g.id)}`}>{g.display_name}</Link>
                </li>
              ))}
            </ul>
          )}
          <div class="two">
            <div>
              <h2>Mapped traits</h2>
              <p class="hint">
                What the connection's data mapping made of the SCIM resource; your application reads these.
              </p>
              <Json value={u.traits ?? {}} label="Mapped traits" />
            </div>
            <div>
              <h2>SCIM resource as stored</h2>
              <Json value={u.scim ?? {}} label="SCIM resource" />
            </div>
          </div>
        </>
      )}
    </section>
  );
}

export function GroupDetail({ orgId, id }: { orgId: string; id: string }) {
  const group = useLoad(
    () => call<DirectoryGroup>("GET", `/organizations/${enc(orgId)}/groups/${enc(id)}`),
    [orgId, id],
  );
  const g = group.data;
  return (
    <section>
      <Crumbs orgId={orgId} section="groups" />
      <h1>{g?.display_name ?? "Group"}</h1>
      <ErrorNote error={group.error} />
      {g === undefined ? (
        group.loading ? (
          <Loading what="the group" />
        ) : null
      ) : (
        <>
          <dl class="facts card">
            <dt>Id</dt>
            <dd class="mono wrap">{g.id}</dd>
            <dt>externalId</dt>
            <dd class="wrap">{g.external_id ?? "—"}</dd>
            <dt>Members</dt>
            <dd>{g.member_count}</dd>
            <dt>Updated</dt>
            <dd>
              <Time iso={g.update_time} />
            </dd>
          </dl>
          <h2>Members</h2>
          {(g.members ?? []).length === 0 ? (
            <Empty title="No members">Members the identity provider adds to this group appear here.</Empty>
          ) : (
            <ul class="plain">
              {(g.members ?? []).map((m) => (
                <li key={m.value}>
                  <Link
                    href={`/organizations/${enc(orgId)}/${m.type === "Group" ? "groups" : "users"}/${enc(m.value)}`}
                  >
                    {m.display}
                  </Link>{" "}
                  <span class="small muted">{m.type === "Group" ? "(group)" : ""}</span>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
