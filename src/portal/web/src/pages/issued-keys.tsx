import { useState } from "preact/hooks";
import { type ApiKey, call, q } from "../api.js";
import { Empty, ErrorNote, ListStatus, OnceSecret, Pager, useAction, useLoad, usePager } from "../ui.js";
import { IssuedKeyRow } from "./issued-key-row.js";
import { parseMetadata, parseRateLimits, parseScopes } from "./key-fields.js";
import { emptyDraft, KeyFields } from "./key-form.js";

export function IssuedKeys() {
  const [showRevoked, setShowRevoked] = useState(false);
  const pager = usePager();
  const [fresh, setFresh] = useState<{ name: string; secret: string } | undefined>();
  const list = useLoad(
    () =>
      call<{ issued_api_keys: ApiKey[]; next_page_token: string }>(
        "GET",
        `/issuedApiKeys${q({ show_revoked: showRevoked ? "true" : undefined, page_size: 50, page_token: pager.token })}`,
      ),
    [showRevoked, pager.token],
  );
  const keys = list.data?.issued_api_keys ?? [];
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
      <ListStatus
        load={list}
        what="keys"
        isEmpty={keys.length === 0}
        empty={<Empty title="No issued keys">Create one above; its secret is shown once.</Empty>}
      />
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
  return (
    <form
      class="card grid-form"
      aria-label="Create an issued key"
      onSubmit={(e) => {
        e.preventDefault();
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
      }}
    >
      <KeyFields draft={draft} set={setDraft} withOrg />
      <div class="form-end span">
        <button type="submit" disabled={action.busy}>
          Create key
        </button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      <ErrorNote error={action.error} />
    </form>
  );
}
