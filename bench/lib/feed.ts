import type { Dispatcher } from "undici";
import { type Endpoint, jsonOf, send } from "./http.js";

export type FeedResult =
  | { readonly status: "unavailable"; readonly reason: string }
  | {
      readonly status: "ok";
      readonly events: number;
      readonly pages: number;
      readonly pageSize: number;
      readonly seconds: number;
      readonly eventsPerSecond: number;
    };

const PAGE_SIZE = 1000;

/**
 * The events feed as one consumer reads it: from the oldest retained event, `page_size=1000`, following
 * `next_after` until a page comes back empty. Seeding recorded one `user.created` (and `group.created`) per resource,
 * so the feed holds at least N + M events.
 */
export async function measureFeed(pool: Dispatcher, admin: Endpoint, organizationId: string): Promise<FeedResult> {
  const path = (after: string | undefined) =>
    `/v2alpha1/admin/events?organization_id=${organizationId}&page_size=${PAGE_SIZE}` +
    (after === undefined ? "" : `&after=${encodeURIComponent(after)}`);
  const started = performance.now();
  let after: string | undefined;
  let events = 0;
  let pages = 0;
  for (;;) {
    const reply = await send(pool, admin, { method: "GET", path: path(after) });
    if (reply.status === 404 || reply.status === 405) {
      return { status: "unavailable", reason: `GET /v2alpha1/admin/events answered ${reply.status}` };
    }
    if (reply.status !== 200)
      throw new Error(`feed page ${pages + 1}: HTTP ${reply.status} ${reply.text.slice(0, 200)}`);
    const body = jsonOf(reply);
    const page = Array.isArray(body.events) ? body.events.length : 0;
    pages++;
    if (page === 0) break;
    events += page;
    after = typeof body.next_after === "string" ? body.next_after : undefined;
  }
  const seconds = (performance.now() - started) / 1000;
  return { status: "ok", events, pages, pageSize: PAGE_SIZE, seconds, eventsPerSecond: events / seconds };
}
