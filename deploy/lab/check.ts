/**
 * The lab's verdict on one scenario: what the load was told (every 2xx write) against what the current primary holds
 * (read directly, not through the pooler), what the events feed lists and what the webhook receiver verified.
 */
import pg from "pg";
import { type GroupState, type Load, type UserState, contentKey } from "./load.js";
import type { Delivery } from "./receiver.js";

export interface FeedEvent {
  readonly id: string;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** Every event of the organization in the feed, oldest first, page by page. */
export async function readFeed(lb: string, adminToken: string, organizationId: string): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  let after = "";
  for (let page = 0; page < 10_000; page++) {
    const query = `organization_id=${organizationId}&page_size=1000${after === "" ? "" : `&after=${encodeURIComponent(after)}`}`;
    const res = await fetch(`${lb}/v2alpha1/admin/events?${query}`, {
      headers: { authorization: `Bearer ${adminToken}` },
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw new Error(`events feed: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { events: FeedEvent[]; next_after: string };
    events.push(...body.events);
    if (body.events.length === 0) break;
    after = body.next_after;
  }
  return events;
}

export interface DatabaseState {
  readonly users: Map<string, { userName: string; title: string | null }>;
  readonly groups: Map<string, { name: string; members: Set<string> }>;
  readonly outbox: number;
}

export async function readDatabase(port: number, organizationId: string, clientId: string): Promise<DatabaseState> {
  const db = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "roster" });
  await db.connect();
  try {
    const users = new Map<string, { userName: string; title: string | null }>();
    const rows = await db.query<{ id: string; user_name: string; title: string | null }>(
      "select id, user_name, scim->>'title' as title from identities where organization_id = $1",
      [organizationId],
    );
    for (const r of rows.rows) users.set(r.id, { userName: r.user_name, title: r.title });
    const groups = new Map<string, { name: string; members: Set<string> }>();
    const g = await db.query<{ id: string; display_name: string }>(
      "select id, display_name from directory_groups where organization_id = $1",
      [organizationId],
    );
    for (const r of g.rows) groups.set(r.id, { name: r.display_name, members: new Set() });
    const m = await db.query<{ group_id: string; identity_id: string }>(
      "select group_id, identity_id from group_user_members where organization_id = $1",
      [organizationId],
    );
    for (const r of m.rows) groups.get(r.group_id)?.members.add(r.identity_id);
    const outbox = await db.query<{ n: number }>("select count(*)::int as n from webhook_outbox where client_id = $1", [
      clientId,
    ]);
    return { users, groups, outbox: outbox.rows[0]?.n ?? 0 };
  } finally {
    await db.end();
  }
}

export async function outboxLeft(port: number, clientId: string): Promise<number> {
  const db = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "roster" });
  await db.connect();
  try {
    const r = await db.query<{ n: number }>("select count(*)::int as n from webhook_outbox where client_id = $1", [
      clientId,
    ]);
    return r.rows[0]?.n ?? 0;
  } finally {
    await db.end();
  }
}

/** One acknowledged change's delivery: how long after its write's 2xx the first verified delivery arrived. */
export interface Latency {
  readonly ackedAt: number;
  readonly ms: number;
  /** The change's content key (event kind and resource), for finding it in the instances' logs. */
  readonly key: string;
  /** The first delivery's webhook-id (the event's id) and how many times that id arrived. */
  readonly webhookId: string;
  readonly sent: number;
}

export interface Verdict {
  readonly acknowledged: Map<string, number>;
  readonly lostWrites: string[];
  readonly unexplainedRows: number;
  readonly unknownThatCommitted: number;
  readonly unknownWrites: number;
  readonly expectedEvents: number;
  readonly feedEvents: number;
  readonly feedMissing: string[];
  readonly feedDuplicates: number;
  readonly feedUnexplained: string[];
  readonly feedFromLostAnswers: number;
  readonly deliveriesTotal: number;
  readonly deliveredDistinct: number;
  readonly webhookMissing: string[];
  readonly feedUndelivered: number;
  readonly deliveredNotInFeed: number;
  readonly duplicatesById: number;
  readonly duplicatesByContent: number;
  readonly outbox: number;
  /** Per acknowledged write: first verified delivery of its event minus its 2xx, ms (undelivered ones left out). */
  readonly latencies: Latency[];
  readonly ok: boolean;
}

const sameUser = (a: UserState, row: { userName: string; title: string | null } | undefined): boolean =>
  a.exists ? row !== undefined && row.userName === a.userName && row.title === a.title : row === undefined;
const sameGroup = (a: GroupState, row: { name: string; members: Set<string> } | undefined): boolean =>
  a.exists
    ? row !== undefined &&
      row.name === a.name &&
      row.members.size === a.members.size &&
      [...a.members].every((m) => row.members.has(m))
    : row === undefined;

export function judge(load: Load, db: DatabaseState, feed: FeedEvent[], deliveries: readonly Delivery[]): Verdict {
  const acknowledged = new Map<string, number>();
  for (const w of load.writes) if (w.ok) acknowledged.set(w.kind, (acknowledged.get(w.kind) ?? 0) + 1);
  const unknownWrites = load.writes.filter((w) => !w.ok && !(Number(w.status) >= 400 && Number(w.status) < 500));

  // The primary: every acknowledged state is there, or (for a resource whose last write lost its answer) that one's.
  const lostWrites: string[] = [];
  const known = new Set<string>();
  for (const u of load.users) {
    known.add(u.id);
    const row = db.users.get(u.id);
    if (!sameUser(u.acked, row) && !(u.alt !== undefined && sameUser(u.alt, row))) {
      lostWrites.push(`user ${u.id}: expected ${JSON.stringify(u.acked)}, found ${JSON.stringify(row ?? null)}`);
    }
  }
  for (const g of load.groups) {
    known.add(g.id);
    const row = db.groups.get(g.id);
    if (!sameGroup(g.acked, row) && !(g.alt !== undefined && sameGroup(g.alt, row))) {
      const found = row === undefined ? null : { name: row.name, members: [...row.members] };
      lostWrites.push(
        `group ${g.id}: expected ${g.acked.name} with ${g.acked.members.size} members, found ${JSON.stringify(found)}`,
      );
    }
  }
  let unexplainedRows = 0;
  let unknownThatCommitted = 0;
  for (const [id, row] of db.users) {
    if (known.has(id)) continue;
    if (load.unknownUserCreates.has(row.userName)) unknownThatCommitted++;
    else unexplainedRows++;
  }
  for (const [id, row] of db.groups) {
    if (known.has(id)) continue;
    if (load.unknownGroupCreates.has(row.name)) unknownThatCommitted++;
    else unexplainedRows++;
  }
  // Resources created by a write whose answer was lost: their later events are theirs, not unexplained.
  const unknownIds = new Set(
    [...db.users.entries()]
      .filter(([id, r]) => !known.has(id) && load.unknownUserCreates.has(r.userName))
      .map(([id]) => id),
  );
  for (const [id, r] of db.groups) if (!known.has(id) && load.unknownGroupCreates.has(r.name)) unknownIds.add(id);

  // The feed: each acknowledged change exactly once; anything else only from a write whose answer was lost.
  const expectedKeys = new Set(load.expected.map((e) => e.key));
  const feedByKey = new Map<string, number>();
  for (const e of feed) {
    const key = contentKey(e.event, e.data);
    feedByKey.set(key, (feedByKey.get(key) ?? 0) + 1);
  }
  const feedMissing = [...expectedKeys].filter((k) => !feedByKey.has(k));
  const feedDuplicates = [...feedByKey.values()].filter((n) => n > 1).length;
  const feedUnexplained: string[] = [];
  let feedFromLostAnswers = 0;
  for (const e of feed) {
    const key = contentKey(e.event, e.data);
    if (expectedKeys.has(key)) continue;
    if (load.possible.has(key) || unknownIds.has(String(e.data.id))) feedFromLostAnswers++;
    else if (!e.event.startsWith("user.") && !e.event.startsWith("group.")) continue;
    else feedUnexplained.push(key);
  }

  // The webhooks: every acknowledged change and every event of the feed delivered (verified) at least once.
  const firstByKey = new Map<string, Delivery>();
  const idsByKey = new Map<string, Set<string>>();
  const timesById = new Map<string, number>();
  for (const d of deliveries) {
    const key = contentKey(d.body.event, d.body.data);
    if (!firstByKey.has(key)) firstByKey.set(key, d);
    const ids = idsByKey.get(key) ?? new Set<string>();
    ids.add(d.webhookId);
    idsByKey.set(key, ids);
    timesById.set(d.webhookId, (timesById.get(d.webhookId) ?? 0) + 1);
  }
  const webhookMissing = [...expectedKeys].filter((k) => !firstByKey.has(k));
  const feedIds = new Set(feed.map((e) => e.id));
  const feedUndelivered = feed.filter(
    (e) => (e.event.startsWith("user.") || e.event.startsWith("group.")) && !timesById.has(e.id),
  ).length;
  const deliveredNotInFeed = [...timesById.keys()].filter((id) => !feedIds.has(id)).length;
  const duplicatesById = [...timesById.values()].filter((n) => n > 1).length;
  const duplicatesByContent = [...idsByKey.values()].filter((ids) => ids.size > 1).length;
  const latencies = load.expected.flatMap((e) => {
    const first = firstByKey.get(e.key);
    if (first === undefined) return [];
    const sent = timesById.get(first.webhookId) ?? 1;
    return [
      { ackedAt: e.ackedAt, ms: Math.max(0, first.at - e.ackedAt), key: e.key, webhookId: first.webhookId, sent },
    ];
  });

  const ok =
    lostWrites.length === 0 &&
    unexplainedRows === 0 &&
    feedMissing.length === 0 &&
    feedDuplicates === 0 &&
    feedUnexplained.length === 0 &&
    webhookMissing.length === 0 &&
    feedUndelivered === 0 &&
    deliveredNotInFeed === 0 &&
    duplicatesByContent === 0 &&
    db.outbox === 0;
  return {
    acknowledged,
    lostWrites,
    unexplainedRows,
    unknownThatCommitted,
    unknownWrites: unknownWrites.length,
    expectedEvents: load.expected.length,
    feedEvents: feed.length,
    feedMissing,
    feedDuplicates,
    feedUnexplained,
    feedFromLostAnswers,
    deliveriesTotal: deliveries.length,
    deliveredDistinct: timesById.size,
    webhookMissing,
    feedUndelivered,
    deliveredNotInFeed,
    duplicatesById,
    duplicatesByContent,
    outbox: db.outbox,
    latencies,
    ok,
  };
}
