import type { Static } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { DIRECTORY_EVENT_KINDS } from "../../directory/events.js";
import type { ScimClientService } from "../../directory/scim-clients/service.js";
import type { Clock } from "../../platform/clock.js";
import { isUuid } from "../../platform/ids.js";
import type { Webhooks } from "../../webhooks/index.js";
import type { AttemptRecord, EventLog } from "../../webhooks/event-log-repo.js";
import type { WebhookResender } from "../../webhooks/resend.js";
import { TEST_EVENT } from "../../webhooks/test-event-repo.js";
import { AdminError, invalidArgument, notFound } from "../errors.js";
import type { JsonObject } from "../json.js";
import { pageOf, parsePageRequest } from "../paging.js";
import { errors, Page } from "../schemas/kit.js";
import {
  BulkResendBody,
  ClientParams,
  EventParams,
  QueuedJson,
  WebhookEventJson,
  WebhookEventsQuery,
} from "../schemas/scim-clients.js";

/** The filter's kinds: directory events and the test event (test-event-repo.ts). */
const EVENT_KINDS: readonly string[] = [...DIRECTORY_EVENT_KINDS, TEST_EVENT];

export interface WebhookEventRouteDeps {
  readonly scimClients: ScimClientService;
  readonly eventLog: EventLog;
  readonly resender: WebhookResender;
  /** Bulk resend: queues the failed events again; the route wakes the dispatcher afterwards. */
  readonly requeueFailed: Webhooks["requeueFailed"];
  readonly clock: Clock;
  readonly wake: () => void;
}

const tags = ["Webhook events"];

/** The webhook event log of a SCIM client. */
export function registerWebhookEventRoutes(scope: FastifyInstance, deps: WebhookEventRouteDeps): void {
  const clientOr404 = async (clientId: string) => {
    const client = await deps.scimClients.get(clientId);
    if (client === undefined) throw notFound(`SCIM client ${clientId} does not exist`);
    return client;
  };
  registerBulkResend(scope, deps, clientOr404);

  /** Newest first; `event=<kind>` and `success=true|false` filter; `page_size`/`page_token` page. */
  const list = {
    tags,
    params: ClientParams,
    querystring: WebhookEventsQuery,
    response: { 200: Page("webhook_events", WebhookEventJson), ...errors },
  };
  type List = { Params: Static<typeof ClientParams>; Querystring: Static<typeof WebhookEventsQuery> };
  scope.get<List>("/scimClients/:clientId/webhookEvents", { schema: list }, async (req) => {
    const query = req.query;
    const page = parsePageRequest(query);
    const event = query.event;
    if (event !== undefined && event !== "" && !EVENT_KINDS.includes(event)) {
      throw invalidArgument(`event must be one of ${EVENT_KINDS.join(", ")}`);
    }
    const success = query.success;
    if (success !== undefined && success !== "" && success !== "true" && success !== "false") {
      throw invalidArgument("success must be true or false");
    }
    const client = await clientOr404(req.params.clientId);
    const rows = await deps.eventLog.list({
      clientId: client.clientId,
      event: event === "" ? undefined : event,
      success: success === undefined || success === "" ? undefined : success === "true",
      before: page.after === undefined ? undefined : parsePosition(page.after),
      limit: page.pageSize + 1,
    });
    const { items, next_page_token } = pageOf(rows, page.pageSize, (r) => `${r.attempted_at.toISOString()}|${r.id}`);
    const shown = bodiesShownTo(req);
    return { webhook_events: items.map((r) => webhookEventJson(r, shown)), next_page_token };
  });

  /**
   * A new attempt of a logged event, signed anew; answers the attempt (200 even when the delivery failed).
   * find-my-way reads `:eventId::resend` as one parameter name; a regex ends the parameter, `::` is a literal colon.
   */
  scope.post<{ Params: Static<typeof EventParams> }>(
    "/scimClients/:clientId/webhookEvents/:eventId(^[0-9A-Za-z_-]+)::resend",
    { schema: { tags, params: EventParams, response: { 200: WebhookEventJson, ...errors } } },
    async (req) => {
      const client = await clientOr404(req.params.clientId);
      const eventId = req.params.eventId;
      if (!isUuid(eventId)) throw notFound(`webhook event ${eventId} does not exist`);
      const result = await deps.resender.resend(client, eventId.toLowerCase());
      if (!result.ok) {
        if (result.reason === "event_not_found") throw notFound(`webhook event ${eventId} does not exist`);
        throw new AdminError("FAILED_PRECONDITION", "the SCIM client has no webhook URL and secret configured");
      }
      return webhookEventJson(result.attempt, bodiesShownTo(req));
    },
  );
}

/**
 * `{state: "failed", since?: RFC 3339}` → `{queued}`: every event whose latest attempt failed (since `since`; default:
 * all the event log keeps) goes back to the outbox, at most MAX_BULK_RESEND per call (docs/webhooks.md).
 */
function registerBulkResend(scope: FastifyInstance, deps: WebhookEventRouteDeps, clientOr404: ClientOr404): void {
  // `::` is a literal colon for find-my-way.
  const schema = { tags, params: ClientParams, body: BulkResendBody, response: { 200: QueuedJson, ...errors } };
  type Resend = { Params: Static<typeof ClientParams>; Body: Static<typeof BulkResendBody> };
  scope.post<Resend>("/scimClients/:clientId/webhookEvents::resend", { schema }, async (req) => {
    const rawSince = req.body.since ?? undefined;
    const since = rawSince === undefined ? new Date(0) : new Date(rawSince);
    if (rawSince !== undefined && (!RFC3339.test(rawSince) || Number.isNaN(since.getTime()))) {
      throw invalidArgument("since must be an RFC 3339 time, e.g. 2026-01-01T00:00:00Z");
    }
    const client = await clientOr404(req.params.clientId);
    const queued = await deps.requeueFailed({
      clientId: client.clientId,
      organizationId: client.organizationId,
      since,
      now: deps.clock.now(),
    });
    if (queued > 0) deps.wake();
    return { queued };
  });
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
type ClientOr404 = (
  clientId: string,
) => ReturnType<ScimClientService["get"]> extends Promise<infer C> ? Promise<NonNullable<C>> : never;

function parsePosition(key: string): { attemptedAt: Date; id: string } {
  const [time, id] = key.split("|");
  const attemptedAt = new Date(time ?? "");
  if (Number.isNaN(attemptedAt.getTime()) || !isUuid(id)) throw invalidArgument("page_token is invalid");
  return { attemptedAt, id };
}

/**
 * Whether the receiver's answers are shown: a receiver may answer with anything (an internal service's secrets
 * included), so only the admin role reads them; viewers see `response_body: null`.
 */
const bodiesShownTo = (req: FastifyRequest): boolean => req.adminPrincipal?.role === "admin";

export function webhookEventJson(
  r: Omit<AttemptRecord, "state"> & { readonly state: string | null },
  showResponseBody: boolean,
): JsonObject {
  return {
    id: r.id,
    event_id: r.event_id,
    directory_id: r.client_id,
    event: r.event,
    success: r.success,
    status_code: r.status_code,
    error: r.error,
    duration_ms: r.duration_ms,
    resend: r.resend,
    attempt: r.attempt,
    state: r.state ?? (r.success ? "delivered" : "failed"),
    next_attempt_time: r.next_attempt_time === null ? null : r.next_attempt_time.toISOString(),
    attempt_time: r.attempted_at.toISOString(),
    payload: JSON.parse(r.payload) as unknown,
    request_headers: r.request_headers ?? {},
    response_body: showResponseBody ? r.response_body : null,
    response_body_truncated: showResponseBody && r.response_body_truncated === true,
  };
}
