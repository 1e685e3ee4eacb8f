import { type Kysely, type MigrationResult, type MigrationResultSet, sql } from "kysely";
import { MIGRATIONS } from "./migrations/index.js";
import type { Database } from "./schema.js";

type Db = Kysely<Database>;

/**
 * The key of the transaction-level advisory lock that serialises migrations (any 64-bit number nothing else uses):
 * held only inside the migrating transaction, it ends with it — on commit, rollback, or the loss of the connection —
 * so no idle connection, pooled or not, can ever keep it.
 */
const MIGRATION_LOCK_KEY = 7_263_190_514_000_233n;

/** What the database holds of the known migrations. */
interface MigrationState {
  readonly pending: readonly string[];
  /** Applied migrations this version does not know: a newer version migrated the database. */
  readonly unknown: readonly string[];
}

const tableOf = (schema: string | undefined) =>
  schema === undefined ? sql.table("kysely_migration") : sql.table(`${schema}.kysely_migration`);

/** One statement: the names of the applied migrations (none when the table does not exist yet). */
async function stateOf(db: Db, schema: string | undefined): Promise<MigrationState> {
  let applied: Set<string>;
  try {
    const { rows } = await sql<{ name: string }>`select name from ${tableOf(schema)}`.execute(db);
    applied = new Set(rows.map((r) => r.name));
  } catch (e) {
    if ((e as { code?: unknown }).code !== "42P01") throw e;
    applied = new Set();
  }
  const known = Object.keys(MIGRATIONS);
  return {
    pending: known.filter((name) => !applied.has(name)).sort(),
    unknown: [...applied].filter((name) => !(name in MIGRATIONS)),
  };
}

/** Ready = reachable and every known migration applied: one query. */
export async function pendingMigrations(db: Db, schema?: string): Promise<number> {
  return (await stateOf(db, schema)).pending.length;
}

/**
 * Applies every pending migration, in name order (features land independently: a migration may sort before one
 * already applied on a long-lived database). Kysely's migration table is kept, so its Migrator reads the same state.
 *
 * First one cheap query: with nothing to apply, nothing is locked and nothing waits. Otherwise all the pending
 * migrations run in one transaction that first takes a transaction-level advisory lock: instances started together
 * apply them once, one after the other, the others finding nothing left once they hold the lock. A session-level
 * lock (Kysely's own Migrator takes one, with a one-hour lock timeout) would be taken and released on different
 * server connections behind a transaction pooler and outlive its migrator on an idle pooled connection.
 */
export async function migrate(db: Db, schema?: string): Promise<MigrationResultSet> {
  const before = await stateOf(db, schema);
  refuseUnknown(before);
  if (before.pending.length === 0) return { results: [] };
  const results = await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(trx);
    await sql`create table if not exists ${tableOf(schema)} (
      name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(trx);
    const now = await stateOf(trx, schema);
    refuseUnknown(now);
    const applied: MigrationResult[] = [];
    for (const name of now.pending) {
      await MIGRATIONS[name]?.up(trx);
      await sql`insert into ${tableOf(schema)} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
        trx,
      );
      applied.push({ migrationName: name, direction: "Up", status: "Success" });
    }
    return applied;
  });
  return { results };
}

/** As Kysely's Migrator does: an older version does not run on a database a newer one migrated. */
function refuseUnknown(state: MigrationState): void {
  if (state.unknown.length > 0) {
    throw new Error(`corrupted migrations: previously executed migration ${state.unknown[0]} is missing`);
  }
}
