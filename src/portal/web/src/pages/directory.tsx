import { useState } from "preact/hooks";
import { call, type DirectoryGroup, type DirectoryUser, enc, q } from "../api.js";
import { Link } from "../router.js";
import { Empty, ErrorNote, Field, Loading, Pager, useLoad, usePager } from "../ui.js";

const USER_ATTRIBUTES = ["userName", "externalId", "employeeNumber"] as const;
const GROUP_ATTRIBUTES = ["displayName", "externalId"] as const;

/** An eq search on one indexed attribute, as SCIM filters it; the value is quoted as a JSON string. */
function SearchForm(props: { attributes: readonly string[]; what: string; onSearch: (filter: string) => void }) {
  const [attribute, setAttribute] = useState(props.attributes[0] ?? "");
  const [value, setValue] = useState("");
  return (
    <form
      class="toolbar filters"
      aria-label={`Search ${props.what}`}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSearch(value.trim() === "" ? "" : `${attribute} eq ${JSON.stringify(value.trim())}`);
      }}
    >
      <Field label="Attribute">
        {(id) => (
          <select id={id} value={attribute} onChange={(e) => setAttribute(e.currentTarget.value)}>
            {props.attributes.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="equals" hint="An exact match on the chosen attribute.">
        {(id, d) => (
          <input
            id={id}
            type="search"
            aria-describedby={d}
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
          />
        )}
      </Field>
      <div class="form-end">
        <button type="submit">Search</button>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setValue("");
            props.onSearch("");
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}

type UserList = { users: DirectoryUser[]; next_page_token: string };

export function UsersTab({ orgId }: { orgId: string }) {
  const [filter, setFilter] = useState("");
  const pager = usePager();
  const list = useLoad(
    () =>
      call<UserList>(
        "GET",
        `/organizations/${enc(orgId)}/users${q({ filter, page_size: 50, page_token: pager.token })}`,
      ),
    [orgId, filter, pager.token],
  );
  const users = list.data?.users ?? [];
  return (
    <>
      <h2>Users</h2>
      <SearchForm
        attributes={USER_ATTRIBUTES}
        what="users"
        onSearch={(f) => {
          setFilter(f);
          pager.reset();
        }}
      />
      <ErrorNote error={list.error} />
      {list.loading && list.data === undefined ? <Loading what="users" /> : null}
      {list.data !== undefined && users.length === 0 ? (
        filter === "" ? (
          <Empty title="No users synced yet">
            Assign people to the app in your identity provider: they appear here once it pushes them.
          </Empty>
        ) : (
          <Empty title="No user matches">
            Search is an exact match on one attribute; check the value or clear the search.
          </Empty>
        )
      ) : null}
      {users.length > 0 ? (
        <table class="responsive">
          <caption class="sr-only">Users</caption>
          <thead>
            <tr>
              <th scope="col">userName</th>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Active</th>
              <th scope="col">Groups</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id}>
                <td data-label="userName">
                  <Link href={`/organizations/${enc(orgId)}/users/${enc(u.id)}`}>{u.user_name}</Link>
                </td>
                <td data-label="Name">{u.display_name ?? "—"}</td>
                <td data-label="Email" class="wrap">
                  {u.email ?? "—"}
                </td>
                <td data-label="Active">{u.active ? "yes" : "no"}</td>
                <td data-label="Groups">
                  {u.groups.length === 0 ? "—" : u.groups.map((g) => g.display_name).join(", ")}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager pager={pager} nextToken={list.data?.next_page_token} />
    </>
  );
}

type GroupList = { groups: DirectoryGroup[]; next_page_token: string };

export function GroupsTab({ orgId }: { orgId: string }) {
  const [filter, setFilter] = useState("");
  const pager = usePager();
  const list = useLoad(
    () =>
      call<GroupList>(
        "GET",
        `/organizations/${enc(orgId)}/groups${q({ filter, page_size: 50, page_token: pager.token })}`,
      ),
    [orgId, filter, pager.token],
  );
  const groups = list.data?.groups ?? [];
  return (
    <>
      <h2>Groups</h2>
      <SearchForm
        attributes={GROUP_ATTRIBUTES}
        what="groups"
        onSearch={(f) => {
          setFilter(f);
          pager.reset();
        }}
      />
      <ErrorNote error={list.error} />
      {list.loading && list.data === undefined ? <Loading what="groups" /> : null}
      {list.data !== undefined && groups.length === 0 ? (
        filter === "" ? (
          <Empty title="No groups synced yet">Push groups from your identity provider (in Okta: Push Groups).</Empty>
        ) : (
          <Empty title="No group matches">Search is an exact match; check the name or clear the search.</Empty>
        )
      ) : null}
      {groups.length > 0 ? (
        <table class="responsive">
          <caption class="sr-only">Groups</caption>
          <thead>
            <tr>
              <th scope="col">displayName</th>
              <th scope="col">externalId</th>
              <th scope="col">Members</th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr key={g.id}>
                <td data-label="displayName">
                  <Link href={`/organizations/${enc(orgId)}/groups/${enc(g.id)}`}>{g.display_name}</Link>
                </td>
                <td data-label="externalId" class="wrap">
                  {g.external_id ?? "—"}
                </td>
                <td data-label="Members">{g.member_count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager pager={pager} nextToken={list.data?.next_page_token} />
    </>
  );
}
