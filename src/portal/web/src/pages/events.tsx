import { useState } from "preact/hooks";
import { type Connection, call, EVENT_KIND_OPTIONS, enc, q, type WebhookEvent } from "../api.js";
import { Exchange } from "./event-exchange.js";
import { Link } from "../router.js";
import { OpenButton, SelectField, ActionForm } from "../fields.js";
import { DetailPane, ErrorNote, Json, ListStatus, Pager, Time, useAction, useLoad, usePager } from "../ui.js";

const OUTCOMES = [
  ["", "Delivered and failed"],
  ["true", "Delivered"],
  ["false", "Failed"],
] as const;
const PAGE_SIZES = (["25", "50", "100", "250"] as const).map((n) => [n, n] as const);

type EventList = { webhook_events: WebhookEvent[]; next_page_token: string };

/** The webhook event log of one connection: newest first, filtered, paged past any number of rows. */
export function EventsTab({ conn }: { conn: Connection }) {
  const [kind, setKind] = useState("");
  const [outcome, setOutcome] = useState("");
  const [pageSize, setPageSize] = useState(50);
  const pager = usePager();
  const [selected, setSelected] = useState<WebhookEvent | undefined>();
  const [checked, setChecked] = useState<Set<string>>(new Set());
  const list = useLoad(
    () =>
      call<EventList>(
        "GET",
        `/scimClients/${enc(conn.client_id)}/webhookEvents${q({
          event: kind,
          success: outcome,
          page_size: pageSize,
          page_token: pager.token,
        })}`,
      ),
    [conn.client_id, kind, outcome, pageSize, pager.token],
  );
  const bulk = useAction();
  const [bulkResult, setBulkResult] = useState<string | undefined>();
  const events = list.data?.webhook_events ?? [];
  const resendable = conn.webhook?.secret_set === true;

  return (
    <>
      <h2>Webhook events</h2>
      <p class="hint">
        Each delivery attempt to this connection's webhook. Every change is also in the organization's{" "}
        <Link href={`/organizations/${enc(conn.organization_id)}/events?directory_id=${enc(conn.client_id)}`}>
          events feed
        </Link>
        , delivered or not.
      </p>
      {!conn.log_webhook_events ? (
        <p class="warning">
          Delivery logging is off for this connection: new attempts are not recorded. Turn it on under{" "}
          <Link href={`/connections/${enc(conn.client_id)}/settings`}>Settings → Webhook</Link>.
        </p>
      ) : null}
      <ActionForm class="toolbar filters" aria-label="Filter events">
        <SelectField label="Event type" value={kind} options={EVENT_KIND_OPTIONS} onChange={pager.resetting(setKind)} />
        <SelectField label="Outcome" value={outcome} options={OUTCOMES} onChange={pager.resetting(setOutcome)} />
        <SelectField
          label="Per page"
          value={String(pageSize)}
          options={PAGE_SIZES}
          onChange={pager.resetting((v: string) => setPageSize(Number(v)))}
        />
        <div class="form-end">
          <button type="button" class="secondary" onClick={list.reload}>
            Refresh
          </button>
        </div>
      </ActionForm>
      <ListStatus load={list} what="events" items={events} emptyTitle="No webhook events here">
        {conn.webhook === null
          ? "Set a webhook URL under Settings; every change your identity provider pushes is then delivered and logged here."
          : kind !== "" || outcome !== ""
            ? "No attempt matches these filters: widen them."
            : "Push a user or group from your identity provider: each delivery attempt appears here."}
      </ListStatus>
      {events.length > 0 ? (
        <>
          <div class="actions">
            <button
              type="button"
              class="secondary"
              disabled={checked.size === 0 || bulk.busy || !resendable}
              onClick={() =>
                bulk.run(async () => {
                  setBulkResult(undefined);
                  let ok = 0;
                  const failures: string[] = [];
                  for (const id of checked) {
                    try {
                      const attempt = await call<WebhookEvent>(
                        "POST",
                        `/scimClients/${enc(conn.client_id)}/webhookEvents/${enc(id)}:resend`,
                      );
                      if (attempt.success) ok++;
                      else failures.push(`${id}: HTTP ${attempt.status_code ?? "—"} ${attempt.error ?? ""}`);
                    } catch (e) {
                      failures.push(`${id}: ${e instanceof Error ? e.message : String(e)}`);
                    }
                  }
                  setChecked(new Set());
                  setBulkResult(`${ok} delivered, ${failures.length} failed`);
                  list.reload();
                  if (failures.length > 0) throw new Error(failures.join("; "));
                })
              }
            >
              Resend selected ({checked.size})
            </button>
            <button
              type="button"
              class="secondary"
              disabled={bulk.busy || !resendable}
              onClick={() =>
                bulk.run(async () => {
                  setBulkResult(undefined);
                  const out = await call<{ queued: number }>(
                    "POST",
                    `/scimClients/${enc(conn.client_id)}/webhookEvents:resend`,
                    { state: "failed" },
                  );
                  setBulkResult(`${out.queued} failed events queued for delivery`);
                  list.reload();
                })
              }
            >
              Resend every failed event
            </button>
            {bulkResult !== undefined ? <span role="status">{bulkResult}</span> : null}
          </div>
          <ErrorNote error={bulk.error} />
          <div class="split">
            <ul class="cards events" aria-label="Delivery attempts">
              {events.map((ev) => (
                <li class={`card row ${selected?.id === ev.id ? "selected" : ""}`} key={ev.id}>
                  <input
                    type="checkbox"
                    aria-label={`Select ${ev.event} of ${ev.attempt_time} for resend`}
                    checked={checked.has(ev.event_id)}
                    onChange={(e) => {
                      const next = new Set(checked);
                      if (e.currentTarget.checked) next.add(ev.event_id);
                      else next.delete(ev.event_id);
                      setChecked(next);
                    }}
                  />
                  <div class="row-main">
                    <OpenButton open={selected?.id === ev.id} onClick={() => setSelected(ev)}>
                      {ev.event}
                    </OpenButton>
                    <span class={`badge ${ev.success ? "ok" : ev.state === "retrying" ? "warn" : "bad"}`}>
                      {ev.success ? "Delivered" : ev.state === "retrying" ? "Retrying" : "Failed"}{" "}
                      {ev.status_code ?? ""}
                    </span>
                    <span class="small muted">
                      <Time iso={ev.attempt_time} /> · attempt {ev.attempt} · {ev.duration_ms ?? "—"} ms
                      {ev.resend ? " · resend" : ""}
                    </span>
                  </div>
                </li>
              ))}
            </ul>
            {selected !== undefined ? (
              <EventDetail
                conn={conn}
                ev={selected}
                resendable={resendable}
                onClose={() => setSelected(undefined)}
                onResent={(attempt) => {
                  setSelected(attempt);
                  list.reload();
                }}
              />
            ) : null}
          </div>
          <Pager pager={pager} nextToken={list.data?.next_page_token} />
        </>
      ) : null}
    </>
  );
}

function EventDetail(props: {
  conn: Connection;
  ev: WebhookEvent;
  resendable: boolean;
  onClose: () => void;
  onResent: (attempt: WebhookEvent) => void;
}) {
  const { ev } = props;
  const action = useAction();
  return (
    <DetailPane label="Event detail" title={ev.event} itemKey={ev.id} onClose={props.onClose}>
      <dl class="facts">
        <dt>Event id</dt>
        <dd class="mono wrap">{ev.event_id}</dd>
        <dt>Attempt</dt>
        <dd>
          #{ev.attempt}, {ev.resend ? "manual resend" : "automatic delivery"} at <Time iso={ev.attempt_time} />
        </dd>
        <dt>State</dt>
        <dd>
          {ev.state}
          {ev.next_attempt_time === null ? null : (
            <>
              {" "}
              · next attempt <Time iso={ev.next_attempt_time} />
            </>
          )}
        </dd>
        <dt>Response status</dt>
        <dd>{ev.status_code ?? "no response"}</dd>
        <dt>Duration</dt>
        <dd>{ev.duration_ms === null ? "—" : `${ev.duration_ms} ms`}</dd>
        {ev.error !== null ? (
          <>
            <dt>Error</dt>
            <dd class="wrap">{ev.error}</dd>
          </>
        ) : null}
      </dl>
      <h4>Payload</h4>
      <Json value={ev.payload} label="Payload" />
      <Exchange ev={ev} />
      <div class="actions">
        <button
          type="button"
          disabled={action.busy || !props.resendable}
          onClick={() =>
            action.run(async () => {
              const attempt = await call<WebhookEvent>(
                "POST",
                `/scimClients/${enc(props.conn.client_id)}/webhookEvents/${enc(ev.event_id)}:resend`,
              );
              props.onResent(attempt);
            })
          }
        >
          Resend this event
        </button>
        {!props.resendable ? <span class="hint">Resend needs a webhook URL and secret.</span> : null}
      </div>
      <ErrorNote error={action.error} />
    </DetailPane>
  );
}
