import { useState } from "preact/hooks";
import { call, enc } from "../api.js";
import { ActionForm, RowButton, SelectField, SubmitRow, TextField } from "../fields.js";
import { usePagedList } from "../paged.js";
import { ConfirmDelete } from "../confirm.js";
import { ErrorNote, ListStatus, OnceSecret, Pager, Time, useAction } from "../ui.js";

/** A setup link as the admin API lists it (docs/setup-links.md); `url` only in the answer to its creation. */
interface SetupLink {
  id: string;
  state: "ACTIVE" | "EXPIRED" | "REVOKED";
  return_url: string | null;
  create_time: string;
  expire_time: string;
  revoke_time: string | null;
  first_open_time: string | null;
  webhook: { url: string; retry: string } | null;
  url?: string;
}

const DAY_MS = 86_400_000;
/** "7" is the server's default and sends nothing; the others stay far from its 30-day bound, whatever this clock says. */
const EXPIRY: readonly [string, string][] = [
  ["1", "in 1 day"],
  ["7", "in 7 days"],
  ["14", "in 14 days"],
];

/**
 * A Standard Webhooks secret in the form `:generateWebhookSecret` gives a connection (`whsec_` and 32 random bytes in
 * base64), made here: the link does not exist yet, and the secret only travels in the create request.
 */
const generateSecret = () => `whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`;

/** The organization's setup links: create one (its URL shown once), see who opened it, revoke it. */
export function SetupLinksTab({ orgId }: { orgId: string }) {
  const [fresh, setFresh] = useState<{ url: string; secret?: string } | undefined>();
  const [revoking, setRevoking] = useState<SetupLink | undefined>();
  const {
    pager,
    list,
    items: links,
  } = usePagedList<SetupLink>("/setupLinks", "setup_links", {
    organization_id: orgId,
  });
  return (
    <>
      <h2>Setup links</h2>
      <p class="lead">
        A setup link lets the customer's IT admin connect their identity provider without an admin token: it opens a
        view of this organization's connections only, until it expires or you revoke it.
      </p>
      <CreateSetupLink
        orgId={orgId}
        onCreated={(created) => {
          setFresh(created);
          list.reload();
        }}
      />
      {fresh === undefined ? null : (
        <>
          <OnceSecret label="Setup link" value={fresh.url}>
            Send it to the customer's IT admin over a channel fit for a credential.
          </OnceSecret>
          {fresh.secret === undefined ? null : (
            <OnceSecret label="Webhook secret" value={fresh.secret}>
              Configure it in your endpoint to verify the signatures.
            </OnceSecret>
          )}
        </>
      )}
      <ListStatus load={list} what="setup links" items={links} emptyTitle="No setup links yet">
        Create one above and send it to the customer's IT admin.
      </ListStatus>
      <ul class="cards" aria-label="Setup links">
        {links.map((l) => (
          <li class="card row" key={l.id}>
            <div class="row-main">
              <span class="row-title">
                Link created <Time iso={l.create_time} />
              </span>{" "}
              <span class={`badge ${l.state === "ACTIVE" ? "ok" : "bad"}`}>{l.state.toLowerCase()}</span>
              <span class="small muted">
                {l.state === "REVOKED" ? "revoked " : "expires "}
                <Time iso={l.revoke_time ?? l.expire_time} /> · first opened{" "}
                {l.first_open_time === null ? "never" : <Time iso={l.first_open_time} />}
              </span>
              <span class="small muted wrap">
                Webhook: {l.webhook === null ? "the organization's, if its connections share one" : l.webhook.url}
              </span>
            </div>
            {l.state === "ACTIVE" ? (
              <div class="row-actions">
                <RowButton label={`Revoke the link created ${l.create_time}`} danger onClick={() => setRevoking(l)}>
                  Revoke
                </RowButton>
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      <Pager pager={pager} nextToken={list.data?.next_page_token} />
      {revoking === undefined ? null : (
        <ConfirmDelete
          title="Revoke this setup link?"
          confirmLabel="Revoke link"
          path={`/setupLinks/${enc(revoking.id)}`}
          onClose={() => setRevoking(undefined)}
          onDeleted={list.reload}
        >
          <p>The link and every session it opened stop working at once. Connections made with it stay.</p>
        </ConfirmDelete>
      )}
    </>
  );
}

function CreateSetupLink(props: { orgId: string; onCreated: (created: { url: string; secret?: string }) => void }) {
  const [days, setDays] = useState("7");
  const [returnUrl, setReturnUrl] = useState("");
  const [webhookUrl, setWebhookUrl] = useState("");
  const [secret, setSecret] = useState("");
  const [generated, setGenerated] = useState(false);
  const action = useAction();
  const create = () =>
    action.run(async () => {
      const url = webhookUrl.trim();
      const created = await call<SetupLink>("POST", "/setupLinks", {
        organization_id: props.orgId,
        intent: "directory_sync",
        ...(days === "7" ? {} : { expire_time: new Date(Date.now() + Number(days) * DAY_MS).toISOString() }),
        ...(returnUrl.trim() === "" ? {} : { return_url: returnUrl.trim() }),
        ...(url === "" && secret === "" ? {} : { webhook: { url, secret } }),
      });
      props.onCreated({ url: created.url ?? "", ...(generated && url !== "" ? { secret } : {}) });
      setSecret("");
      setGenerated(false);
    });
  return (
    <ActionForm class="card grid-form" aria-label="Create a setup link" onSubmit={create}>
      <SelectField label="Expires" value={days} options={EXPIRY} onChange={setDays} />
      <TextField
        label="Return URL"
        hint="Optional: where the Done button of the setup view leads, e.g. your app's settings page."
        type="url"
        value={returnUrl}
        onInput={setReturnUrl}
        maxLength={2048}
      />
      <TextField
        label="Webhook URL"
        hint="Optional: connections made with the link start with this webhook, so connection.created, connection.activated and every directory change are delivered there. Empty: the organization's webhook, if its connections share one."
        type="url"
        mono
        value={webhookUrl}
        placeholder="https://app.example.com/webhooks/roster"
        onInput={setWebhookUrl}
        maxLength={2048}
      />
      <TextField
        label="Webhook secret"
        hint="Required with a webhook URL: the secret your endpoint verifies signatures with (at least 16 characters). Generate one for a new endpoint only. Stored encrypted, never shown again."
        mono
        value={secret}
        onInput={(v) => {
          setSecret(v);
          setGenerated(false);
        }}
        maxLength={1024}
      />
      <SubmitRow label="Create setup link" busy={action.busy} span>
        <button
          type="button"
          class="secondary"
          disabled={action.busy}
          onClick={() => {
            setSecret(generateSecret());
            setGenerated(true);
          }}
        >
          Generate webhook secret
        </button>
      </SubmitRow>
      <ErrorNote error={action.error} />
    </ActionForm>
  );
}
