import pg from "pg";
import { createLogger } from "../../src/platform/logger.js";
import { startEmbedded } from "../../src/storage/embedded.js";
import type { Cleanup } from "./cleanup.js";

export interface BenchDatabase {
  /** Where Roster and the ceiling app connect. */
  readonly url: string;
  readonly engine: "embedded" | "server";
  readonly description: string;
}

/**
 * A fresh database for one run: a database `roster_bench_<ts>` on the server of ROSTER_DATABASE_URL (dropped at the
 * end), or a throwaway embedded cluster (removed at the end).
 */
export async function startDatabase(serverUrl: string | undefined, cleanup: Cleanup): Promise<BenchDatabase> {
  if (serverUrl === undefined) {
    const cluster = await startEmbedded({ dataDir: undefined, logger: createLogger("warn") });
    cleanup.add("embedded PostgreSQL", () => cluster.stop());
    return { url: cluster.url, engine: "embedded", description: "embedded cluster (temporary directory)" };
  }
  const name = `roster_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  cleanup.add(`database ${name}`, () => dropDatabase(serverUrl, name));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), engine: "server", description: `database ${name} on ${url.host}` };
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    // WITH (FORCE) (PostgreSQL 13+) ends sessions a crashed child may have left behind.
    await admin.query(`drop database if exists ${name} with (force)`).catch(async () => {
      await admin.query(`drop database if exists ${name}`);
    });
  } finally {
    await admin.end();
  }
}

/**
 * VACUUM ANALYZE of the bench's database: statistics for every table and the visibility map of freshly inserted
 * pages, as a production database has them — autovacuum's first pass (on PostgreSQL 13+ also triggered by inserts
 * alone, autovacuum_vacuum_insert_threshold) would otherwise come up to a minute after seeding, in the middle of the
 * reads. Without the visibility map an index-only scan (an offset page's ids) reads every heap row it skips.
 * The reads measure the steady state.
 */
export async function vacuumAnalyzeDatabase(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const started = performance.now();
    await client.query("vacuum analyze");
    return performance.now() - started;
  } finally {
    await client.end();
  }
}
