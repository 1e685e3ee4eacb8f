import { useState } from "preact/hooks";
import { type Connection, call, enc, type Organization, q } from "../api.js";
import { useLinks } from "../links.js";
import { Link, navigate } from "../router.js";
import { oneTime } from "../secrets.js";
import { SelectField, TextField, ActionForm, SubmitRow } from "../fields.js";
import { ErrorNote, ListStatus, Tabs, Time, useAction, useLoad } from "../ui.js";
import { StateBadge } from "./connection-state.js";
import { GroupsTab, UsersTab } from "./directory.js";
import { FeedTab } from "./feed.js";
import { IDP_OPTIONS, IDPS, type IdpKey } from "./idps.js";
import { SetupLinksTab } from "./setup-links.js";

export type OrgTab = "connections" | "users" | "groups" | "events" | "setup-links";

export function OrganizationPage({ orgId, tab }: { orgId: string; tab: OrgTab }) {
  const org = useLoad(() => call<Organization>("GET", `/organizations/${enc(orgId)}`), [orgId]);
  const base = `/organizations/${enc(orgId)}`;
  return (
    <section>
      <nav aria-label="Breadcrumb" class="crumbs">
        <Link href="/organizations">Organizations</Link> <span aria-hidden="true">/</span>
      </nav>
      <h1>{org.data?.name ?? "Organization"}</h1>
      <ErrorNote error={org.error} />
      <p class="mono small muted">{orgId}</p>
      <Tabs
        label="Organization"
        current={tab}
        tabs={[
          ["connections", base, "Connections"],
          ["users", `${base}/users`, "Users"],
          ["groups", `${base}/groups`, "Groups"],
          ["events", `${base}/events`, "Events feed"],
          ["setup-links", `${base}/setup-links`, "Setup links"],
        ]}
      />
      {tab === "connections" ? <Connections orgId={orgId} /> : null}
      {tab === "users" ? <UsersTab orgId={orgId} /> : null}
      {tab === "groups" ? <GroupsTab orgId={orgId} /> : null}
      {tab === "events" ? <FeedTab orgId={orgId} /> : null}
      {tab === "setup-links" ? <SetupLinksTab orgId={orgId} /> : null}
    </section>
  );
}

type ClientList = { scim_clients: Connection[]; next_page_token: string };

/** The organization's connections; `max` bounds how many may be created here (the server enforces it too). */
export function Connections({ orgId, max }: { orgId: string; max?: number }) {
  const links = useLinks();
  const list = useLoad(
    () => call<ClientList>("GET", `/scimClients${q({ organization_id: orgId, page_size: 1000 })}`),
    [orgId],
  );
  const clients = list.data?.scim_clients ?? [];
  return (
    <>
      <h2>Connections</h2>
      <p class="lead">
        A connection is one SCIM client: the base URL and secret you enter in an identity provider. Users and groups it
        pushes belong to this organization.
      </p>
      {max === undefined ? null : (
        <p class="hint">
          {clients.length} of at most {max} connections.
        </p>
      )}
      {max !== undefined && clients.length >= max ? null : <CreateConnection orgId={orgId} />}
      <ListStatus load={list} what="connections" items={clients} emptyTitle="No connections yet">
        Create one above, then follow its setup guide in your identity provider's console.
      </ListStatus>
      {clients.length > 0 ? (
        <ul class="cards" aria-label="Connections">
          {clients.map((c) => (
            <li class="card row" key={c.client_id}>
              <div class="row-main">
                <Link href={links.connection(c.client_id)} class="row-title">
                  {c.name === "" ? c.client_id : c.name}
                </Link>
                <StateBadge conn={c} />
                <span class="mono small muted wrap">{c.scim_base_url}</span>
                <span class="small muted">
                  Created <Time iso={c.create_time} />
                </span>
                {c.webhook?.secret_set === false ? <span class="badge warn">Webhook without secret</span> : null}
              </div>
              <div class="row-actions">
                {links.events === undefined ? null : (
                  <Link href={links.events(c.client_id)} class="button secondary small">
                    Events
                  </Link>
                )}
                <Link
                  href={links.settings?.(c.client_id) ?? links.requests(c.client_id)}
                  class="button secondary small"
                >
                  {links.settings === undefined ? "SCIM requests" : "Settings"}
                </Link>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

/** A new connection of the organization; its setup guide, for the chosen identity provider, opens next. */
export function CreateConnection({ orgId }: { orgId: string }) {
  const links = useLinks();
  const [name, setName] = useState("");
  const [idp, setIdp] = useState<IdpKey>("okta");
  const action = useAction();
  const create = () =>
    action.run(async () => {
      const created = await call<Connection>("POST", "/scimClients", {
        organization_id: orgId,
        name: name.trim() === "" ? IDPS[idp].name : name.trim(),
      });
      if (created.secret !== undefined) oneTime.put(created.client_id, created.secret);
      navigate(`${links.connection(created.client_id)}?idp=${idp}`);
    });
  return (
    <ActionForm class="card grid-form" aria-label="Create a connection" onSubmit={create}>
      <SelectField
        label="Identity provider"
        hint="Chooses the setup guide shown next; you can switch guides later."
        value={idp}
        options={IDP_OPTIONS}
        onChange={setIdp}
      />
      <TextField
        label="Connection name"
        hint="Optional; defaults to the identity provider's name."
        error={action.error}
        value={name}
        onInput={setName}
        maxLength={256}
      />
      <SubmitRow label="Create connection" busy={action.busy} />
    </ActionForm>
  );
}
