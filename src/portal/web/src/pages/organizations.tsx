import { useState } from "preact/hooks";
import { call, enc, type Organization, q } from "../api.js";
import { Link, navigate } from "../router.js";
import { Field, RowButton, TextField, ActionForm } from "../fields.js";
import { ConfirmDelete } from "../confirm.js";
import { Empty, ErrorNote, Loading, Time, useAction, useLoad } from "../ui.js";

type OrgList = { organizations: Organization[]; next_page_token: string };

/** All organizations, a thousand at a time (the API's largest page), searched by name or id in the page. */
export function OrganizationsPage() {
  const [extra, setExtra] = useState<Organization[]>([]);
  const list = useLoad(() => call<OrgList>("GET", `/organizations${q({ page_size: 1000 })}`), []);
  const [more, setMore] = useState<string>("");
  const [search, setSearch] = useState("");
  const loadMore = useAction();
  const orgs = [...(list.data?.organizations ?? []), ...extra];
  const nextToken = more !== "" ? more : extra.length === 0 ? (list.data?.next_page_token ?? "") : "";
  const needle = search.trim().toLowerCase();
  const shown = needle === "" ? orgs : orgs.filter((o) => o.name.toLowerCase().includes(needle) || o.id === needle);

  const loadNext = () =>
    loadMore.run(async () => {
      const page = await call<OrgList>("GET", `/organizations${q({ page_size: 1000, page_token: nextToken })}`);
      setExtra((e) => [...e, ...page.organizations]);
      setMore(page.next_page_token === "" ? "" : page.next_page_token);
    });

  return (
    <section>
      <h1>Organizations</h1>
      <p class="lead">
        An organization is one customer (tenant). Its connections receive users and groups from an identity provider
        over SCIM.
      </p>
      <CreateOrganization onCreated={(o) => navigate(`/organizations/${enc(o.id)}`)} />
      <div class="toolbar">
        <TextField
          label="Search organizations"
          hint="By name, or by exact id."
          value={search}
          onInput={setSearch}
          type="search"
        />
      </div>
      <ErrorNote error={list.error} />
      {list.loading && list.data === undefined ? <Loading what="organizations" /> : null}
      {list.data !== undefined && orgs.length === 0 ? (
        <Empty title="No organizations yet">Create the first one above: give it your customer's name.</Empty>
      ) : null}
      {orgs.length > 0 && shown.length === 0 ? (
        <Empty title={`No organization matches “${search}”`}>Check the spelling, or clear the search.</Empty>
      ) : null}
      {shown.length > 0 ? (
        <ul class="cards" aria-label="Organizations">
          {shown.map((o) => (
            <OrganizationRow key={o.id} org={o} onChanged={list.reload} />
          ))}
        </ul>
      ) : null}
      {nextToken !== "" ? (
        <div class="actions">
          <button type="button" class="secondary" disabled={loadMore.busy} onClick={loadNext}>
            Load more organizations
          </button>
          <ErrorNote error={loadMore.error} />
        </div>
      ) : null}
    </section>
  );
}

function CreateOrganization({ onCreated }: { onCreated: (o: Organization) => void }) {
  const [name, setName] = useState("");
  const action = useAction();
  const create = () =>
    action.run(async () => {
      const org = await call<Organization>("POST", "/organizations", { name: name.trim() });
      setName("");
      onCreated(org);
    });
  return (
    <ActionForm class="inline-form card" aria-label="Create an organization" onSubmit={create}>
      <TextField
        label="New organization name"
        error={action.error}
        value={name}
        onInput={setName}
        required
        maxLength={256}
      />
      <button type="submit" disabled={action.busy || name.trim() === ""}>
        Create organization
      </button>
    </ActionForm>
  );
}

function OrganizationRow({ org, onChanged }: { org: Organization; onChanged: () => void }) {
  const [renaming, setRenaming] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [name, setName] = useState(org.name);
  const rename = useAction();
  const saveName = () =>
    rename.run(async () => {
      await call("PATCH", `/organizations/${enc(org.id)}`, { name: name.trim() });
      setRenaming(false);
      onChanged();
    });
  return (
    <li class="card row">
      <div class="row-main">
        <Link href={`/organizations/${enc(org.id)}`} class="row-title">
          {org.name}
        </Link>
        <span class="mono small muted">{org.id}</span>
        <span class="small muted">
          Created <Time iso={org.create_time} />
        </span>
      </div>
      {renaming ? (
        <ActionForm class="inline-form" onSubmit={saveName}>
          <Field label={`New name for ${org.name}`} error={rename.error}>
            {(id, d) => (
              <input
                id={id}
                required
                maxLength={256}
                aria-describedby={d}
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
              />
            )}
          </Field>
          <button type="submit" disabled={rename.busy}>
            Save
          </button>
          <button type="button" class="secondary" onClick={() => setRenaming(false)}>
            Cancel
          </button>
        </ActionForm>
      ) : (
        <div class="row-actions">
          <RowButton label={`Rename ${org.name}`} onClick={() => setRenaming(true)}>
            Rename
          </RowButton>
          <RowButton label={`Delete ${org.name}`} danger onClick={() => setConfirming(true)}>
            Delete
          </RowButton>
        </div>
      )}
      {confirming ? (
        <ConfirmDelete
          title={`Delete ${org.name}?`}
          confirmLabel="Delete organization"
          path={`/organizations/${enc(org.id)}`}
          onDeleted={onChanged}
          onClose={() => setConfirming(false)}
        >
          <p>This removes, at once and for good:</p>
          <ul>
            <li>
              every connection (SCIM client) of {org.name}: identity providers pushing to them get 404 from now on;
            </li>
            <li>every user and group synced into it, with their memberships;</li>
            <li>its API keys, which stop verifying;</li>
            <li>the webhook event log of its connections.</li>
          </ul>
        </ConfirmDelete>
      ) : null}
    </li>
  );
}
