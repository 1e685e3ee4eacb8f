import type { Static } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { DIRECTORY_EVENT_KINDS } from "../../directory/events.js";
import type { OrganizationService } from "../../directory/organizations/service.js";
import type { EventFeed } from "../../events/feed.js";
import type { EventRow } from "../../events/repo.js";
import { isUuid } from "../../platform/ids.js";
import { AdminError, invalidArgument, notFound } from "../errors.js";
import type { JsonObject } from "../json.js";
import { IdParams } from "../schemas/directory.js";
import { errors } from "../schemas/kit.js";
import { EventJson, EventsQuery } from "../schemas/scim-clients.js";

export const DEFAULT_FEED_PAGE_SIZE = 100;
export const MAX_FEED_PAGE_SIZE = 1000;
const EVENT_KINDS: readonly string[] = DIRECTORY_EVENT_KINDS;
const tags = ["Events"];

export interface EventRouteDeps {
  readonly feed: EventFeed;
  readonly organizations: OrganizationService;
}

/** The events feed (docs/events.md): `GET /events` pages by `after` tokens, `GET /events/{id}` reads one. */
export function registerEventRoutes(scope: FastifyInstance, deps: EventRouteDeps): void {
  const page = Type.Object({ events: Type.Array(EventJson), next_after: Type.String() });
  const list = { tags, querystring: EventsQuery, response: { 200: page, ...errors } };
  scope.get<{ Querystring: Static<typeof EventsQuery> }>("/events", { schema: list }, async (req) => {
    const query = req.query;
    const organizationId = query.organization_id;
    if (organizationId === undefined || organizationId === "") throw invalidArgument("organization_id is required");
    const directoryId = query.directory_id;
    const events = parseKinds(query.event);
    const pageSize = parsePageSize(query.page_size);
    const after = query.after === "" ? undefined : query.after;
    if (!isUuid(organizationId) || (await deps.organizations.get(organizationId)) === undefined) {
      throw notFound(`organization ${organizationId} does not exist`);
    }
    const page = await deps.feed.page({
      organizationId: organizationId.toLowerCase(),
      directoryId: directoryId === "" ? undefined : directoryId,
      events,
      after,
      pageSize,
    });
    if (!page.ok && page.reason === "invalid") throw invalidArgument(page.message);
    if (!page.ok) {
      throw new AdminError(
        "FAILED_PRECONDITION",
        "this after token is older than the event retention period and events after it may have been deleted: " +
          "restart from after=now and reconcile with a full listing",
        [],
        410,
      );
    }
    return { events: page.events.map(eventJson), next_after: page.nextAfter };
  });

  const one = { tags, params: IdParams, response: { 200: EventJson, ...errors } };
  scope.get<{ Params: Static<typeof IdParams> }>("/events/:id", { schema: one }, async (req) => {
    const row = isUuid(req.params.id) ? await deps.feed.get(req.params.id.toLowerCase()) : undefined;
    if (row === undefined) throw notFound(`event ${req.params.id} does not exist`);
    return eventJson(row);
  });
}

function parseKinds(raw: string | undefined): string[] | undefined {
  if (raw === undefined || raw === "") return undefined;
  const kinds = raw.split(",").map((k) => k.trim());
  for (const k of kinds) {
    if (!EVENT_KINDS.includes(k))
      throw invalidArgument(`event must be a comma-separated list of ${EVENT_KINDS.join(", ")}`);
  }
  return kinds;
}

function parsePageSize(raw: string | undefined): number {
  if (raw === undefined || raw === "") return DEFAULT_FEED_PAGE_SIZE;
  const n = /^\d{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= MAX_FEED_PAGE_SIZE)) {
    throw invalidArgument(`page_size must be an integer from 1 to ${MAX_FEED_PAGE_SIZE}`);
  }
  return n;
}

export function eventJson(r: EventRow): JsonObject {
  return {
    id: r.id,
    event: r.event,
    organization_id: r.organization_id,
    directory_id: r.directory_id,
    source: r.source,
    create_time: r.create_time.toISOString(),
    data: JSON.parse(r.data) as JsonObject,
  };
}
