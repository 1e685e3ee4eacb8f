import { sql } from "kysely";
import type { DirectoryEvent, EventSink } from "../../src/directory/events.js";
import type { Db } from "../../src/storage/database.js";
import { createTestApp, createTestDatabase, type TestApp } from "./app.js";

export interface RecordedEvent {
  readonly kind: string;
  readonly resourceId: string;
  readonly clientId: string;
  readonly data: Record<string, unknown>;
}

export interface RecordingSink {
  readonly sink: EventSink;
  /** Committed events, in recording order. */
  events(): Promise<RecordedEvent[]>;
  clear(): Promise<void>;
}

/**
 * An EventSink that writes into a table through the change's own transaction, as the outbox does: a rolled-back
 * request leaves no event behind, so tests see exactly what would be delivered.
 */
export async function recordingSink(db: Db): Promise<RecordingSink> {
  await sql`create table if not exists test_events (
    seq bigserial primary key, kind text not null, resource_id uuid not null, client_id text not null,
    data jsonb not null)`.execute(db);
  const sink: EventSink = {
    async record(trx, client, events: readonly DirectoryEvent[]) {
      for (const e of events) {
        await sql`insert into test_events (kind, resource_id, client_id, data)
          values (${e.kind}, ${e.resourceId}, ${client.clientId}, ${JSON.stringify(e.data)})`.execute(trx);
      }
    },
    inline(client, events: readonly DirectoryEvent[], when) {
      if (events.length === 0) return undefined;
      return sql`ev_test as (insert into test_events (kind, resource_id, client_id, data)
        select v.kind, v.resource_id, ${client.clientId}, v.data
        from unnest(${events.map((e) => e.kind)}::text[], ${events.map((e) => e.resourceId)}::uuid[],
          ${events.map((e) => JSON.stringify(e.data))}::jsonb[]) with ordinality as v(kind, resource_id, data, n)
        where ${when}
        order by v.n)`;
    },
  };
  return {
    sink,
    async events() {
      const { rows } = await sql<{
        kind: string;
        resource_id: string;
        client_id: string;
        data: Record<string, unknown>;
      }>`
        select kind, resource_id, client_id, data from test_events order by seq`.execute(db);
      return rows.map((r) => ({ kind: r.kind, resourceId: r.resource_id, clientId: r.client_id, data: r.data }));
    },
    async clear() {
      await sql`delete from test_events`.execute(db);
    },
  };
}

export interface RecordingApp {
  readonly t: TestApp;
  readonly recorder: RecordingSink;
  close(): Promise<void>;
}

/** A test app whose directory events go to a recording sink in the app's own fresh database. */
export async function createRecordingApp(): Promise<RecordingApp> {
  const database = await createTestDatabase();
  const recorder = await recordingSink(database.db);
  const t = await createTestApp({ database, extra: { eventSink: recorder.sink } });
  return {
    t,
    recorder,
    async close() {
      await t.close();
      await database.close();
    },
  };
}
