import { sql } from "kysely";
import type { Clock } from "../platform/clock.js";
import type { Db } from "../storage/database.js";
import type { OutboxStats } from "./metrics.js";

/** Counted up to this many rows: a scrape stays cheap however large a backlog grows. */
const BACKLOG_COUNT_LIMIT = 100_000;

/** The outbox backlog (counted up to a bound) and the age of its oldest undelivered event, for the metrics. */
export async function outboxStats(db: Db, clock: Clock): Promise<OutboxStats> {
  const { rows } = await sql<{ backlog: number; oldest: Date | null }>`
    select
      (select count(*) from (select 1 from webhook_outbox limit ${BACKLOG_COUNT_LIMIT}) s)::int as backlog,
      (select created_at from webhook_outbox order by seq limit 1) as oldest`.execute(db);
  const row = rows[0];
  const oldest = row?.oldest ?? null;
  return {
    backlog: row?.backlog ?? 0,
    oldestAgeSeconds: oldest === null ? 0 : Math.max(0, (clock.now().getTime() - oldest.getTime()) / 1000),
  };
}
