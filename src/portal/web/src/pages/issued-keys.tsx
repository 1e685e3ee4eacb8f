import { useState } from "preact/hooks";
import { ActionForm, SubmitRow } from "../fields.js";
import { type ApiKey, call } from "../api.js";
import { ErrorNote, ListStatus, OnceSecret, Pager, useAction } from "../ui.js";
import { usePagedList } from "../paged.js";
import { IssuedKeyRow } from "./issued-key-row.js";
import { parseMetadata, parseRateLimits, parseScopes } from "./key-fields.js";
import { emptyDraft, KeyFields } from "./key-form.js";

export function IssuedKeys() {
  const [showRevoked, setShowRevoked] = useState(false);
  const [fresh, setFresh] = useState<{ name: string; secret: string } | undefined>();
  const {
    pager,
    list,
    items: keys,
  } = usePagedList<ApiKey>("/issuedApiKeys", "issued_api_keys", {
    show_revoked: showRevoked ? "true" : undefined,
  });
  return (
    <>
      <CreateIssuedKey
        onCreated={(k) => {
          setFresh({ name: k.name, secret: k.secret ?? "" });
          list.reload();
        }}
      />
      {fresh !== undefined ? (
        <OnceSecret label={`Secret of ${fresh.name}`} value={fresh.secret}>
          Give it to the service that uses the key.
        </OnceSecret>
      ) : null}
      <div class="toolbar">
        <label class="check">
          <input
            type="checkbox"
            checked={showRevoked}
            onChange={(e) => {
              setShowRevoked(e.currentTarget.checked);
              pager.reset();
            }}
          />
          Show revoked keys
        </label>
      </div>
      <ListStatus load={list} what="keys" items={keys} emptyTitle="No issued keys">
        Create one above; its secret is shown once.
      </ListStatus>
      <ul class="cards" aria-label="Issued keys">
        {keys.map((k) => (
          <IssuedKeyRow
            key={k.key_id}
            k={k}
            onChanged={list.reload}
            onSecret={(name, secret) => setFresh({ name, secret })}
          />
        ))}
      </ul>
      <Pager pager={pager} nextToken={list.data?.next_page_token} />
    </>
  );
}

function CreateIssuedKey({ onCreated }: { onCreated: (k: ApiKey) => void }) {
  const [draft, setDraft] = useState(emptyDraft);
  const [open, setOpen] = useState(false);
  const action = useAction();
  if (!open) {
    return (
      <div class="actions">
        <button type="button" onClick={() => setOpen(true)}>
          Create an issued key
        </button>
      </div>
    );
  }
  const create = () =>
    action.run(async () => {
      const created = await call<ApiKey>("POST", "/issuedApiKeys", {
        name: draft.name.trim(),
        ...(draft.org.trim() === "" ? {} : { organization_id: draft.org.trim() }),
        ...(draft.actor.trim() === "" ? {} : { actor_id: draft.actor.trim() }),
        scopes: parseScopes(draft.scopes),
        metadata: parseMetadata(draft.metadata),
        rate_limits: parseRateLimits(draft.limits),
      });
      setDraft(emptyDraft);
      setOpen(false);
      onCreated(created);
    });
  return (
    <ActionForm class="card grid-form" aria-label="Create an issued key" onSubmit={create}>
      <KeyFields draft={draft} set={setDraft} withOrg />
      <SubmitRow label="Create key" busy={action.busy} span>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </SubmitRow>
      <ErrorNote error={action.error} />
    </ActionForm>
  );
}
