import { useState } from "preact/hooks";
import { type Connection, call, EVENT_KIND_OPTIONS, enc, type FeedEvent, q } from "../api.js";
import { Link, useLocation } from "../router.js";
import { OpenButton, SelectField, ActionForm } from "../fields.js";
import { DetailPane, Json, ListStatus, Pager, Time, TimeFact, useLoad, usePager } from "../ui.js";

type FeedPage = { events: FeedEvent[]; next_after: string };
const PAGE_SIZE = 50;

/**
 * The organization's events feed: every committed directory change of every connection, oldest first, whether or
 * not a webhook delivered it. Pages follow the feed's `after` tokens, so a page never skips or repeats an event.
 */
export function FeedTab({ orgId }: { orgId: string }) {
  const loc = useLocation();
  const [directory, setDirectory] = useState(loc.query.get("directory_id") ?? "");
  const [kind, setKind] = useState("");
  const [start, setStart] = useState<"" | "now">("");
  const pager = usePager();
  // Filters and the start point name another list: paging starts over from the chosen start.
  const restarting =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      pager.restart(start);
    };
  const [selected, setSelected] = useState<FeedEvent | undefined>();
  const clients = useLoad(
    () => call<{ scim_clients: Connection[] }>("GET", `/scimClients${q({ organization_id: orgId, page_size: 1000 })}`),
    [orgId],
  );
  const page = useLoad(
    () =>
      call<FeedPage>(
        "GET",
        `/events${q({ organization_id: orgId, directory_id: directory, event: kind, page_size: PAGE_SIZE, after: pager.token })}`,
      ),
    [orgId, directory, kind, pager.token],
  );
  const events = page.data?.events ?? [];
  // A short page is the end of the feed for now; a full one may have more after it.
  const nextToken = events.length === PAGE_SIZE ? page.data?.next_after : "";
  const nameOf = (clientId: string) => {
    const c = clients.data?.scim_clients.find((x) => x.client_id === clientId);
    return c === undefined || c.name === "" ? clientId : c.name;
  };
  return (
    <>
      <h2>Events feed</h2>
      <p class="hint">
        Every change an identity provider made, oldest first, kept for the retention period (30 days by default).
        Applications read the same feed with <span class="mono">GET /v2alpha1/admin/events</span>.
      </p>
      <ActionForm class="toolbar filters" aria-label="Filter the feed">
        <SelectField
          label="Connection"
          value={directory}
          options={[
            ["", "All connections"],
            ...(clients.data?.scim_clients ?? []).map(
              (c) => [c.client_id, c.name === "" ? c.client_id : c.name] as const,
            ),
          ]}
          onChange={restarting(setDirectory)}
        />
        <SelectField label="Event type" value={kind} options={EVENT_KIND_OPTIONS} onChange={restarting(setKind)} />
        <SelectField
          label="Start from"
          value={start}
          options={[
            ["", "the oldest kept event"],
            ["now", "now: only new events"],
          ]}
          onChange={(v) => {
            setStart(v);
            pager.restart(v);
          }}
        />
        <div class="form-end">
          <button
            type="button"
            class="secondary"
            onClick={() => {
              // An empty page answers where to ask next (for `now`, a real position): follow it, else ask again.
              const after = page.data?.next_after;
              if (events.length === 0 && after !== undefined && after !== pager.token) pager.replace(after);
              else page.reload();
            }}
          >
            Check for newer events
          </button>
        </div>
      </ActionForm>
      <ListStatus
        load={page}
        what="events"
        items={events}
        emptyTitle={pager.page === 1 && start === "" ? "No events yet" : "No newer events"}
      >
        {directory !== "" || kind !== ""
          ? "Nothing matches these filters yet: widen them, or check for newer events later."
          : start === "now"
            ? "Changes made from now on appear here: check for newer events."
            : "Connect an identity provider and push users or groups: each change appears here."}
      </ListStatus>
      {events.length > 0 ? (
        <div class="split">
          <ul class="cards events" aria-label="Feed events">
            {events.map((ev) => (
              <li class={`card row ${selected?.id === ev.id ? "selected" : ""}`} key={ev.id}>
                <div class="row-main">
                  <OpenButton open={selected?.id === ev.id} onClick={() => setSelected(ev)}>
                    {ev.event}
                  </OpenButton>
                  <span class="small muted">
                    <Time iso={ev.create_time} /> · {nameOf(ev.directory_id)} · {summary(ev)}
                  </span>
                </div>
              </li>
            ))}
          </ul>
          {selected === undefined ? null : (
            <DetailPane
              label="Feed event"
              title={selected.event}
              itemKey={selected.id}
              onClose={() => setSelected(undefined)}
            >
              <dl class="facts">
                <dt>Event id</dt>
                <dd class="mono wrap">{selected.id}</dd>
                <TimeFact term="Time" iso={selected.create_time} />
                <dt>Connection</dt>
                <dd>
                  <Link href={`/connections/${enc(selected.directory_id)}`}>{nameOf(selected.directory_id)}</Link>
                </dd>
                {directoryLink(orgId, selected)}
              </dl>
              <h4>Data</h4>
              <Json value={selected.data} label="Event data" />
            </DetailPane>
          )}
        </div>
      ) : null}
      <Pager pager={pager} nextToken={nextToken} />
    </>
  );
}

/** Who the event is about, in a few words: the user's email or the group's name (both for a membership). */
function summary(ev: FeedEvent): string {
  const d = ev.data as { id?: unknown; email?: unknown; name?: unknown; group?: { name?: unknown } };
  const parts = [d.email, d.name, d.group?.name].filter((x): x is string => typeof x === "string" && x !== "");
  return parts.length === 0 ? String(d.id ?? "") : parts.join(" · ");
}

/** A link to the user (membership events are about a user too) or group, unless the event deleted it. */
function directoryLink(orgId: string, ev: FeedEvent) {
  const id = typeof ev.data.id === "string" ? ev.data.id : undefined;
  if (id === undefined || ev.event.endsWith(".deleted")) return null;
  const kind = ev.event.startsWith("group.") && !ev.event.startsWith("group.user_") ? "group" : "user";
  return (
    <>
      <dt>In the directory</dt>
      <dd>
        <Link href={`/organizations/${enc(orgId)}/${kind}s/${enc(id)}`}>open the {kind}</Link>
      </dd>
    </>
  );
}
