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

interface Column<T> {
  readonly label: string;
  /** Long values (emails, ids) may break anywhere. */
  readonly wrap?: boolean;
  readonly cell: (row: T) => ComponentChildren;
}

/** A table that narrow screens show as one card a row, each cell labelled by its column (`data-label`). */
function ResponsiveTable<T extends { id: string }>(props: { caption: string; columns: Column<T>[]; rows: T[] }) {
  return (
    <table class="responsive">
      <caption class="sr-only">{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th scope="col" key={c.label}>
              {c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={row.id}>
            {props.columns.map((c) => (
              <td key={c.label} data-label={c.label} class={c.wrap === true ? "wrap" : undefined}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function UsersTable({ orgId, users }: { orgId: string; users: DirectoryUser[] }) {
  const links = useLinks();
  const columns: Column<DirectoryUser>[] = [
    { label: "userName", cell: (u) => <ItemLink href={links.user?.(orgId, u.id)}>{u.user_name}</ItemLink> },
    { label: "Name", cell: (u) => u.display_name ?? "—" },
    { label: "Email", wrap: true, cell: (u) => u.email ?? "—" },
    { label: "Active", cell: (u) => (u.active ? "yes" : "no") },
    {
      label: "Groups",
      cell: (u) => (u.groups.length === 0 ? "—" : u.groups.map((g) => g.display_name).join(", ")),
    },
  ];
  return <ResponsiveTable caption="Users" columns={columns} rows={users} />;
}

export function GroupsTable({ orgId, groups }: { orgId: string; groups: DirectoryGroup[] }) {
  const links = useLinks();
  const columns: Column<DirectoryGroup>[] = [
    { label: "displayName", cell: (g) => <ItemLink href={links.group?.(orgId, g.id)}>{g.display_name}</ItemLink> },
    { label: "externalId", wrap: true, cell: (g) => g.external_id ?? "—" },
    { label: "Members", cell: (g) => g.member_count },
  ];
  return <ResponsiveTable caption="Groups" columns={columns} rows={groups} />;
}
