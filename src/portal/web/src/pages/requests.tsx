import { useState } from "preact/hooks";
import { type Connection, call, enc, q, type ScimRequest } from "../api.js";
import { useLinks } from "../links.js";
import { Link } from "../router.js";
import { Field, OpenButton, SelectField, ActionForm } from "../fields.js";
import { DetailPane, Json, ListStatus, Pager, Time, TimeFact, useLoad, usePager } from "../ui.js";

type RequestList = { requests: ScimRequest[]; next_page_token: string };
interface Filters {
  status: string;
  method: string;
  resource: string;
}
const NO_FILTERS: Filters = { status: "", method: "", resource: "" };
const METHODS = [["", "Any method"], ...["GET", "POST", "PUT", "PATCH", "DELETE"].map((m) => [m, m] as const)] as const;

/** The SCIM request log of one connection: what the identity provider sent and what Roster answered. */
export function RequestsTab({ conn }: { conn: Connection }) {
  const settings = useLinks().settings;
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const pager = usePager();
  const [selected, setSelected] = useState<string | undefined>();
  const path = `/scimClients/${enc(conn.client_id)}/requests`;
  const list = useLoad(
    () =>
      call<RequestList>(
        "GET",
        `${path}${q({
          status: filters.status.trim(),
          method: filters.method,
          resource_id: filters.resource.trim(),
          page_size: 50,
          page_token: pager.token,
        })}`,
      ),
    [path, filters, pager.token],
  );
  const requests = list.data?.requests ?? [];
  const filtered = filters.status !== "" || filters.method !== "" || filters.resource !== "";
  const apply = (f: Filters) => {
    setFilters(f);
    pager.reset();
  };
  return (
    <>
      <h2>SCIM requests</h2>
      <p class={conn.request_log === "off" ? "warning" : "hint"}>
        {conn.request_log === "all" ? "Every request is kept" : null}
        {conn.request_log === "errors" ? "Failed requests (4xx, 5xx) are kept; successful ones are only counted" : null}
        {conn.request_log === "off" ? "The request log is off for this connection: nothing new is kept" : null}, with
        passwords and secrets redacted from both bodies.{" "}
        {settings === undefined ? (
          "The application's team chooses what is kept."
        ) : (
          <>
            Change it under <Link href={settings(conn.client_id)}>Settings</Link>.
          </>
        )}
      </p>
      <ActionForm
        class="toolbar filters"
        aria-label="Filter requests"
        onSubmit={() => {
          apply(draft);
        }}
      >
        <Field label="Status" hint="A class (4xx) or a code (409).">
          {(id, d) => (
            <input
              id={id}
              aria-describedby={d}
              size={6}
              value={draft.status}
              onInput={(e) => setDraft({ ...draft, status: e.currentTarget.value })}
            />
          )}
        </Field>
        <SelectField
          label="Method"
          value={draft.method}
          options={METHODS}
          onChange={(method) => setDraft({ ...draft, method })}
        />
        <Field label="Resource id" hint="The user's or group's SCIM id.">
          {(id, d) => (
            <input
              id={id}
              class="mono"
              aria-describedby={d}
              value={draft.resource}
              onInput={(e) => setDraft({ ...draft, resource: e.currentTarget.value })}
            />
          )}
        </Field>
        <div class="form-end">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setDraft(NO_FILTERS);
              apply(NO_FILTERS);
            }}
          >
            Clear
          </button>
        </div>
      </ActionForm>
      <ListStatus
        load={list}
        what="requests"
        items={requests}
        emptyTitle={filtered ? "No request matches these filters" : "No SCIM requests logged"}
      >
        {filtered
          ? "Widen or clear the filters."
          : "Requests your identity provider sends appear here as the request log setting keeps them."}
      </ListStatus>
      {requests.length > 0 ? (
        <div class="split">
          <ul class="cards events" aria-label="SCIM requests">
            {requests.map((r) => (
              <li class={`card row ${selected === r.id ? "selected" : ""}`} key={r.id}>
                <div class="row-main">
                  <OpenButton open={selected === r.id} wrap onClick={() => setSelected(r.id)}>
                    {r.method} {shortPath(r.path)}
                  </OpenButton>
                  <span class={`badge ${r.status < 400 ? "ok" : "bad"}`}>{r.status}</span>
                  <span class="small muted">
                    <Time iso={r.time} /> · {Math.round(r.duration_ms)} ms
                    {r.scim_type === null ? "" : ` · ${r.scim_type}`}
                  </span>
                </div>
              </li>
            ))}
          </ul>
          {selected === undefined ? null : (
            <RequestDetail path={`${path}/${enc(selected)}`} onClose={() => setSelected(undefined)} />
          )}
        </div>
      ) : null}
      <Pager pager={pager} nextToken={list.data?.next_page_token} />
    </>
  );
}

/** `/scim/{client}/v2/Users/…` → `/Users/…`: the connection is already known. */
const shortPath = (path: string) => path.replace(/^\/scim\/[^/]+\/v2/, "");

function RequestDetail({ path, onClose }: { path: string; onClose: () => void }) {
  const one = useLoad(() => call<ScimRequest>("GET", path), [path]);
  const r = one.data;
  return (
    <DetailPane
      label="Request detail"
      title={r === undefined ? "Request" : `${r.method} ${r.status}`}
      itemKey={path}
      onClose={onClose}
    >
      <ListStatus load={one} what="the request" />
      {r === undefined ? null : (
        <>
          <dl class="facts">
            <dt>Path</dt>
            <dd class="mono wrap">
              {r.path}
              {r.query === null || r.query === "" ? "" : `?${r.query}`}
            </dd>
            <TimeFact term="Time" iso={r.time} />
            <dt>Status</dt>
            <dd>
              {r.status}
              {r.scim_type === null ? "" : ` (scimType ${r.scim_type})`}
            </dd>
            <dt>Duration</dt>
            <dd>{Math.round(r.duration_ms)} ms</dd>
            <dt>Resource id</dt>
            <dd class="mono wrap">{r.resource_id ?? "—"}</dd>
            <dt>User agent</dt>
            <dd class="wrap">{r.user_agent ?? "—"}</dd>
          </dl>
          <Body title="Request body" body={r.request_body} truncated={r.request_truncated === true} />
          <Body title="Response body" body={r.response_body} truncated={r.response_truncated === true} />
        </>
      )}
    </DetailPane>
  );
}

function Body({ title, body, truncated }: { title: string; body: unknown; truncated: boolean }) {
  return (
    <>
      <h4>{title}</h4>
      {body === null || body === undefined ? (
        <p class="muted small">none</p>
      ) : typeof body === "string" ? (
        <pre class="json">{body}</pre>
      ) : (
        <Json value={body} label={`${title} (redacted)`} />
      )}
      {truncated ? <p class="hint">Cut at the request log's size limit.</p> : null}
    </>
  );
}
