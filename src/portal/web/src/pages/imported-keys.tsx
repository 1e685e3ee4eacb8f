import { useState } from "preact/hooks";
import { AdminApiError, type ApiKey, call, enc } from "../api.js";
import { ActionForm, RowButton, TextField } from "../fields.js";
import { ConfirmDelete } from "../confirm.js";
import { ErrorNote, ListStatus, Pager, useAction } from "../ui.js";
import { usePagedList } from "../paged.js";
import { KeyFacts, stateBadge } from "./key-facts.js";
import { type ImportItem, parseImport } from "./key-fields.js";

type ImportResult = { index: number; imported_api_key?: ApiKey; error?: { code: string; message: string } };

export function ImportedKeys() {
  const { pager, list, items: keys } = usePagedList<ApiKey>("/importedApiKeys", "imported_api_keys");
  const [revoking, setRevoking] = useState<ApiKey | undefined>();
  return (
    <>
      <ImportForm onImported={list.reload} />
      <h2>Imported keys</h2>
      <ListStatus load={list} what="keys" items={keys} emptyTitle="No imported keys">
        Paste keys from your current system above to import them.
      </ListStatus>
      <ul class="cards" aria-label="Imported keys">
        {keys.map((k) => (
          <li class="card row" key={k.key_id}>
            <div class="row-main">
              <span class="row-title">{k.name}</span> {stateBadge(k)}
              <KeyFacts k={k} />
            </div>
            <div class="row-actions">
              <RowButton label={`Delete ${k.name}`} danger onClick={() => setRevoking(k)}>
                Delete
              </RowButton>
            </div>
          </li>
        ))}
      </ul>
      <Pager pager={pager} nextToken={list.data?.next_page_token} />
      {revoking !== undefined ? (
        <ConfirmDelete
          title={`Delete ${revoking.name}?`}
          confirmLabel="Delete key"
          path={`/importedApiKeys/${enc(revoking.key_id)}`}
          onDeleted={list.reload}
          onClose={() => setRevoking(undefined)}
        >
          <p>The key is revoked: verification answers REVOKED, and importing the same raw key again is refused.</p>
        </ConfirmDelete>
      ) : null}
    </>
  );
}

function ImportForm({ onImported }: { onImported: () => void }) {
  const [text, setText] = useState("");
  const [name, setName] = useState("imported key");
  const [actor, setActor] = useState("");
  const [results, setResults] = useState<{ items: ImportItem[]; results: ImportResult[] } | undefined>();
  const action = useAction();
  return (
    <ActionForm
      class="card"
      aria-labelledby="import-h"
      onSubmit={() => {
        setResults(undefined);
        action.run(async () => {
          const items = parseImport(text, { name: name.trim(), actor: actor.trim() });
          if (items.length === 0) throw new Error("paste at least one key");
          try {
            const out = await call<{ results: ImportResult[] }>("POST", "/importedApiKeys:batchCreate", {
              requests: items,
            });
            setResults({ items, results: out.results });
          } catch (err) {
            // Every item failed: the per-item results are in the error's details.
            const detail =
              err instanceof AdminApiError ? (err.details[0] as { results?: ImportResult[] } | undefined) : undefined;
            if (detail?.results === undefined) throw err;
            setResults({ items, results: detail.results });
          }
          setText("");
          onImported();
        });
      }}
    >
      <h2 id="import-h">Import keys</h2>
      <TextField
        label="Keys to import"
        hint="One raw key a line, or CSV with a header row naming raw_key, name, actor_id and optionally scopes. Keys are hashed on arrival and never shown again."
        rows={5}
        mono
        value={text}
        onInput={setText}
      />
      <div class="grid-form">
        <TextField label="Name (when the line has none)" value={name} onInput={setName} />
        <TextField label="Actor id (when the line has none)" value={actor} onInput={setActor} />
      </div>
      <div class="form-end">
        <button type="submit" disabled={action.busy || text.trim() === ""}>
          Import
        </button>
      </div>
      <ErrorNote error={action.error} />
      {results !== undefined ? (
        <div role="status">
          <h3>
            {results.results.filter((r) => r.error === undefined).length} imported,{" "}
            {results.results.filter((r) => r.error !== undefined).length} failed
          </h3>
          <ol class="results">
            {results.results.map((r) => (
              <li key={r.index} class={r.error === undefined ? "ok-text" : "error"}>
                Item {r.index + 1} ({results.items[r.index]?.name ?? ""}):{" "}
                {r.error === undefined ? "imported" : `${r.error.code}: ${r.error.message}`}
              </li>
            ))}
          </ol>
        </div>
      ) : null}
    </ActionForm>
  );
}
