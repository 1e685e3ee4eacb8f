import type { ComponentChildren } from "preact";
import { call, type DirectoryGroup, type DirectoryUser, enc } from "../api.js";
import { Link } from "../router.js";
import { Empty, Json, ListStatus, TimeFact, useLoad } from "../ui.js";

/** The frame of a user's or a group's page: the way back to its list, its title, and its loading note or error. */
function DetailPage(props: {
  orgId: string;
  section: "users" | "groups";
  title: string;
  load: { error?: string | undefined; loading: boolean; data?: unknown };
  children: ComponentChildren;
}) {
  const { orgId, section } = props;
  return (
    <section>
      <nav aria-label="Breadcrumb" class="crumbs">
        <Link href="/organizations">Organizations</Link> <span aria-hidden="true">/</span>{" "}
        <Link href={`/organizations/${enc(orgId)}/${section}`}>{section === "users" ? "Users" : "Groups"}</Link>{" "}
        <span aria-hidden="true">/</span>
      </nav>
      <h1>{props.title}</h1>
      <ListStatus load={props.load} what={section === "users" ? "the user" : "the group"} />
      {props.children}
    </section>
  );
}

export function UserDetail({ orgId, id }: { orgId: string; id: string }) {
  const user = useLoad(() => call<DirectoryUser>("GET", `/organizations/${enc(orgId)}/users/${enc(id)}`), [orgId, id]);
  const u = user.data;
  return (
    <DetailPage orgId={orgId} section="users" title={u?.user_name ?? "User"} load={user}>
      {u === undefined ? null : (
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
            <TimeFact term="Created" iso={u.create_time} />
            <TimeFact term="Updated" iso={u.update_time} />
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
    </DetailPage>
  );
}

export function GroupDetail({ orgId, id }: { orgId: string; id: string }) {
  const group = useLoad(
    () => call<DirectoryGroup>("GET", `/organizations/${enc(orgId)}/groups/${enc(id)}`),
    [orgId, id],
  );
  const g = group.data;
  return (
    <DetailPage orgId={orgId} section="groups" title={g?.display_name ?? "Group"} load={group}>
      {g === undefined ? null : (
        <>
          <dl class="facts card">
            <dt>Id</dt>
            <dd class="mono wrap">{g.id}</dd>
            <dt>externalId</dt>
            <dd class="wrap">{g.external_id ?? "—"}</dd>
            <dt>Members</dt>
            <dd>{g.member_count}</dd>
            <TimeFact term="Updated" iso={g.update_time} />
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
    </DetailPage>
  );
}
