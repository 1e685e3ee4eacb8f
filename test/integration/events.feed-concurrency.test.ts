import { sql } from "kysely";
import { DIRECTORY_CHANGE_KINDS } from "../helpers/events.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DirectoryEvent } from "../../src/directory/events.js";
import { uuidv7 } from "../../src/platform/ids.js";
import { adminCall, type SeededClient, seedClient } from "../helpers/seed.js";
import { loadClient } from "../helpers/webhooks.js";
import { createTestApp, type WebhooksApp } from "../helpers/app.js";

// The gap-free promise under concurrency: writers commit in an order unrelated to the order their rows were
// inserted (transactions of several events, held open for a random moment), while a reader follows next_after.

const WRITERS = 8;
const EVENTS_PER_WRITER = 650;
const RESOURCES_PER_WRITER = 5;
const READ_DEADLINE_MS = 60_000;

let w: WebhooksApp;
let c: SeededClient;

beforeAll(async () => {
  w = await createTestApp({ webhooks: true });
  c = await seedClient(w);
});
afterAll(async () => {
  await w.close();
});

interface Seen {
  readonly id: string;
  readonly resource: string;
  readonly n: number;
}

describe("the events feed under concurrent writers", () => {
  it("hands a polling reader every committed event exactly once, in each resource's commit order", async () => {
    const client = await loadClient(w.db, c.clientId);
    const db = w.db;
    let writing = true;

    const writer = async (): Promise<number> => {
      const resources = Array.from({ length: RESOURCES_PER_WRITER }, () => uuidv7());
      const next = new Map(resources.map((r) => [r, 0]));
      let written = 0;
      while (written < EVENTS_PER_WRITER) {
        const count = Math.min(1 + Math.floor(Math.random() * 4), EVENTS_PER_WRITER - written);
        const events: DirectoryEvent[] = Array.from({ length: count }, () => {
          const resource = resources[Math.floor(Math.random() * resources.length)] ?? "";
          const n = next.get(resource) ?? 0;
          next.set(resource, n + 1);
          return { kind: "user.updated", resourceId: resource, data: { id: resource, n } };
        });
        await db.transaction().execute(async (trx) => {
          await w.webhooks.sink.record(trx, client, events);
          // Hold the transaction open a moment: later inserts of other writers commit first.
          if (Math.random() < 0.3) await new Promise((r) => setTimeout(r, Math.random() * 4));
        });
        written += count;
      }
      return written;
    };

    const seen: Seen[] = [];
    let polls = 0;
    const reader = async () => {
      let after = "";
      const deadline = Date.now() + READ_DEADLINE_MS;
      while (writing || seen.length < WRITERS * EVENTS_PER_WRITER) {
        if (Date.now() > deadline) throw new Error(`reader: ${seen.length} events after ${READ_DEADLINE_MS} ms`);
        const res = await adminCall(
          w,
          "GET",
          `/events?organization_id=${c.organizationId}&event=${DIRECTORY_CHANGE_KINDS}&page_size=1000${after === "" ? "" : `&after=${after}`}`,
        );
        expect(res.statusCode).toBe(200);
        const page = res.json() as { events: { id: string; data: { id: string; n: number } }[]; next_after: string };
        polls++;
        for (const e of page.events) seen.push({ id: e.id, resource: e.data.id, n: e.data.n });
        after = page.next_after;
        if (page.events.length === 0) await new Promise((r) => setTimeout(r, 5));
      }
    };

    const reading = reader();
    const written = await Promise.all(Array.from({ length: WRITERS }, writer));
    writing = false;
    await reading;

    const total = written.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(5000);
    const stored = await sql<{ id: string; seq: number }>`
      select id, seq from directory_events
      where organization_id = ${c.organizationId}::uuid and event not like 'connection.%'`.execute(db);
    expect(stored.rows).toHaveLength(total);

    const ids = new Set(seen.map((s) => s.id));
    const missing = stored.rows.filter((r) => !ids.has(r.id)).length;
    const duplicates = seen.length - ids.size;
    expect({ missing, duplicates }).toEqual({ missing: 0, duplicates: 0 });
    expect(seen).toHaveLength(total);

    // Each resource's events in the order they were committed.
    const lastOf = new Map<string, number>();
    for (const s of seen) {
      expect(s.n).toBe((lastOf.get(s.resource) ?? -1) + 1);
      lastOf.set(s.resource, s.n);
    }

    // How often the feed order differs from insert (seq) order: each one a gap a reader paging by seq could leave.
    const seqOf = new Map(stored.rows.map((r) => [r.id, Number(r.seq)]));
    let behind = 0;
    let highest = 0;
    for (const s of seen) {
      const seq = seqOf.get(s.id) ?? 0;
      if (seq < highest) behind++;
      highest = Math.max(highest, seq);
    }
    console.log(
      `events feed: ${WRITERS} writers, ${total} events, ${polls} polls: 0 missing, 0 duplicates; ` +
        `${behind} events committed behind a higher sequence number`,
    );
  }, 90_000);
});
