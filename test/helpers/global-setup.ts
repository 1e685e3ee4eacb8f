import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { createLogger } from "../../src/platform/logger.js";
import { buildPortal } from "../../src/portal/build.js";
import { openDatabase, quoteIdent } from "../../src/storage/database.js";
import { type EmbeddedCluster, startEmbedded } from "../../src/storage/embedded.js";
import { migrate } from "../../src/storage/migrate.js";
import { buildServer } from "./server-build.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's PostgreSQL server (any database on it; the tests' own databases are made beside it). */
    databaseUrl: string;
    /** A database on that server migrated once by this setup, copied for every test database. */
    templateDatabase: string;
    /**
     * The entry point Roster child processes run with plain node (helpers/server-build.ts), or "" to run
     * `node --import tsx src/server.ts` as `npm start` does (ROSTER_TEST_TSX=1).
     */
    serverEntry: string;
  }
}

interface Run {
  readonly url: string;
  /** Databases are server-wide: the prefix keeps this run's apart from other runs on the same server. */
  readonly prefix: string;
  readonly template: string;
  readonly cluster: EmbeddedCluster | undefined;
  /** Where the run's compiled server is, and its entry point ("" when child processes run under tsx). */
  readonly build: string;
  readonly serverEntry: string;
  /** A rebuild under way (watch mode builds it again before each rerun: the tests may have changed `src/`). */
  rebuilding?: Promise<unknown> | undefined;
  /** Projects of the run that have set up and not yet torn down. */
  users: number;
}

/** Each project of the config runs this setup; the run's server and template are made once and shared. */
const RUN = Symbol.for("roster.test.run");
type Holder = { [RUN]?: Promise<Run> };
const holder = globalThis as Holder;

async function onServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const withDatabase = (url: string, name: string): string => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

/**
 * One real PostgreSQL per test run: the server named by ROSTER_TEST_DATABASE_URL, or an embedded cluster
 * (so `npm test` needs no PostgreSQL installed). The migrations run once, into a template database of the run;
 * each test database is a copy of it (see helpers/database.ts), dropped by its test and, whatever is left, here.
 */
async function startRun(): Promise<Run> {
  // The portal's tests need its built assets; `npm install` builds them, this covers a tree changed since.
  await buildPortal(() => {});
  let url = process.env.ROSTER_TEST_DATABASE_URL;
  let cluster: EmbeddedCluster | undefined;
  if (url === undefined || url === "") {
    cluster = await startEmbedded({ dataDir: undefined, logger: createLogger("warn") });
    url = cluster.url;
  }
  const prefix = `rt_${randomBytes(4).toString("hex")}`;
  const template = `${prefix}_tpl`;
  await onServer(url, (c) => c.query(`create database ${quoteIdent(template)}`));
  const build = process.env.ROSTER_TEST_TSX === "1" ? "" : join(tmpdir(), `roster-${prefix}-server`);
  const opened = openDatabase({ url: withDatabase(url, template), schema: "public", poolSize: 1 });
  let serverEntry = "";
  try {
    [serverEntry] = await Promise.all([build === "" ? "" : buildServer(build), migrate(opened.db, "public")]);
  } finally {
    await opened.close();
  }
  return { url, prefix, template, cluster, build, serverEntry, users: 0 };
}

export async function setup(project: TestProject): Promise<() => Promise<void>> {
  holder[RUN] ??= startRun();
  const run = await holder[RUN];
  run.users++;
  project.provide("databaseUrl", run.url);
  project.provide("templateDatabase", run.template);
  project.provide("serverEntry", run.serverEntry);
  project.onTestsRerun(async () => {
    if (run.build === "") return;
    run.rebuilding ??= buildServer(run.build).finally(() => {
      run.rebuilding = undefined;
    });
    await run.rebuilding;
  });
  return async () => {
    run.users--;
    if (run.users > 0) return;
    delete holder[RUN];
    await onServer(run.url, async (c) => {
      const { rows } = await c.query<{ datname: string }>(
        "select datname from pg_database where starts_with(datname, $1)",
        [`${run.prefix}_`],
      );
      for (const { datname } of rows) await c.query(`drop database if exists ${quoteIdent(datname)} with (force)`);
    }).catch((e: unknown) => console.warn(`dropping this run's test databases failed: ${String(e)}`));
    await run.cluster?.stop();
    if (run.build !== "") rmSync(run.build, { recursive: true, force: true });
  };
}
