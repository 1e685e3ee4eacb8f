import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { call, type DirectoryGroup, type DirectoryUser, enc, q } from "../api.js";
import { useLinks } from "../links.js";
import { Link } from "../router.js";
import { SelectField, TextField, ActionForm } from "../fields.js";
import { Empty, ListStatus, Pager, useLoad, usePager } from "../ui.js";

const USER_ATTRIBUTES = ["userName", "externalId", "employeeNumber"] as const;
const GROUP_ATTRIBUTES = ["displayName", "externalId"] as const;

/** An eq search on one indexed attribute, as SCIM filters it; the value is quoted as a JSON string. */
function SearchForm(props: { attributes: readonly string[]; what: string; onSearch: (filter: string) => void }) {
  const [attribute, setAttribute] = useState(props.attributes[0] ?? "");
  const [value, setValue] = useState("");
  return (
    <ActionForm
      class="toolbar filters"
      aria-label={`Search ${props.what}`}
      onSubmit={() => {
        props.onSearch(value.trim() === "" ? "" : `${attribute} eq ${JSON.stringify(value.trim())}`);
      }}
    >
      <SelectField
        label="Attribute"
        value={attribute}
        options={props.attributes.map((a) => [a, a] as const)}
        onChange={setAttribute}
      />
      <TextField
        label="equals"
        hint="An exact match on the chosen attribute."
        value={value}
        onInput={setValue}
        type="search"
      />
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
    </ActionForm>
  );
}

/** A searched, paged list of the organization's users or groups, with its empty states. */
function DirectoryList<K extends "users" | "groups">(props: {
  orgId: string;
  kind: K;
  title: string;
  attributes: readonly string[];
  empty: ComponentChildren;
  noMatch: ComponentChildren;
  table: (items: K extends "users" ? DirectoryUser[] : DirectoryGroup[]) => ComponentChildren;
}) {
  const [filter, setFilter] = useState("");
  const pager = usePager();
  type Page = { users?: DirectoryUser[]; groups?: DirectoryGroup[]; next_page_token: string };
  const list = useLoad(
    () =>
      call<Page>(
        "GET",
        `/organizations/${enc(props.orgId)}/${props.kind}${q({ filter, page_size: 50, page_token: pager.token })}`,
      ),
    [props.orgId, props.kind, filter, pager.token],
  );
  const items = (list.data?.[props.kind] ?? []) as K extends "users" ? DirectoryUser[] : DirectoryGroup[];
  return (
    <>
      <h2>{props.title}</h2>
      <SearchForm
        attributes={props.attributes}
        what={props.kind}
        onSearch={(f) => {
          setFilter(f);
          pager.reset();
        }}
      />
      <ListStatus load={list} what={props.kind} items={items} empty={filter === "" ? props.empty : props.noMatch} />
      {items.length > 0 ? props.table(items) : null}
      <Pager pager={pager} nextToken={list.data?.next_page_token} />
    </>
  );
}

export function UsersTab({ orgId }: { orgId: string }) {
  return (
    <DirectoryList
      orgId={orgId}
      kind="users"
      title="Users"
      attributes={USER_ATTRIBUTES}
      empty={
        <Empty title="No users synced yet">
          Assign people to the app in your identity provider: they appear here once it pushes them.
        </Empty>
      }
      noMatch={
        <Empty title="No user matches">
          Search is an exact match on one attribute; check the value or clear the search.
        </Empty>
      }
      table={(users) => <UsersTable orgId={orgId} users={users} />}
    />
  );
}

export function GroupsTab({ orgId }: { orgId: string }) {
  return (
    <DirectoryList
      orgId={orgId}
      kind="groups"
      title="Groups"
      attributes={GROUP_ATTRIBUTES}
      empty={
        <Empty title="No groups synced yet">Push groups from your identity provider (in Okta: Push Groups).</Empty>
      }
      noMatch={<Empty title="No group matches">Search is an exact match; check the name or clear the search.</Empty>}
      table={(groups) => <GroupsTable orgId={orgId} groups={groups} />}
    />
  );
}

/** A link to an item's page where the view has one, else its name alone. */
function ItemLink({ href, children }: { href: string | undefined; children: ComponentChildren }) {
  return href === undefined ? children : <Link href={href}>{children}</Link>;
}

export function UsersTable({ orgId, users }: { orgId: string; users: DirectoryUser[] }) {
  const links = useLinks();
  return (
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
              <ItemLink href={links.user?.(orgId, u.id)}>{u.user_name}</ItemLink>
            </td>
            <td data-label="Name">{u.display_name ?? "—"}</td>
            <td data-label="Email" class="wrap">
              {u.email ?? "—"}
            </td>
            <td data-label="Active">{u.active ? "yes" : "no"}</td>
            <td data-label="Groups">{u.groups.length === 0 ? "—" : u.groups.map((g) => g.display_name).join(", ")}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function GroupsTable({ orgId, groups }: { orgId: string; groups: DirectoryGroup[] }) {
  const links = useLinks();
  return (
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
              <ItemLink href={links.group?.(orgId, g.id)}>{g.display_name}</ItemLink>
            </td>
            <td data-label="externalId" class="wrap">
              {g.external_id ?? "—"}
            </td>
            <td data-label="Members">{g.member_count}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
