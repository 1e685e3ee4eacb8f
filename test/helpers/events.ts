import { sql } from "kysely";
import type { DirectoryEvent, EventSink } from "../../src/directory/events.js";
import type { Db } from "../../src/storage/database.js";

export interface RecordedEvent {
  kind: DirectoryEvent["kind"];
  resource_id: string;
  data: Record<string, unknown>;
}

/**
 * An EventSink that writes each event into a `test_events` table inside the transaction of the change, so a test
 * sees exactly the events of committed changes (as the webhooks outbox will).
 */
export async function recordingSink(db: Db): Promise<{ sink: EventSink; events: () => Promise<RecordedEvent[]> }> {
  await sql`create table test_events (seq serial primary key, kind text, resource_id uuid, data jsonb)`.execute(db);
  const sink: EventSink = {
    async record(trx, _client, events) {
      for (const e of events) {
        await sql`insert into test_events (kind, resource_id, data)
          values (${e.kind}, ${e.resourceId}, ${JSON.stringify(e.data)}::jsonb)`.execute(trx);
      }
    },
  };
  const events = async () =>
    (await sql<RecordedEvent>`select kind, resource_id, data from test_events order by seq`.execute(db)).rows;
  return { sink, events };
}
