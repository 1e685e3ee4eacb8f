import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { buildApp } from "../../src/app.js";
import { systemClock } from "../../src/platform/clock.js";
import { hashSecret } from "../../src/platform/crypto.js";
import { createLogger } from "../../src/platform/logger.js";
import { type Db, openDatabase, quoteIdent } from "../../src/storage/database.js";
import { migrate } from "../../src/storage/migrate.js";
import { startEmbedded } from "../../src/storage/embedded.js";

const ADMIN_TOKEN = "bench-admin";
const SCIM_SECRET = "bench-scim-secret";

export interface InProcessRoster {
  readonly app: FastifyInstance;
  readonly db: Db;
  /** True when ROSTER_DATABASE_URL named the server (a throwaway schema in it), false for an embedded cluster. */
  readonly external: boolean;
  /** An organization and a SCIM client of it, through the admin API. */
  scimClient(): Promise<{ organizationId: string; base: string; headers: Record<string, string> }>;
  close(): Promise<void>;
}

/**
 * buildApp in this process (app.inject: server work and serialisation, no network) on ROSTER_DATABASE_URL — in a
 * throwaway schema dropped on close — or on an embedded PostgreSQL removed on close. For the focused scripts
 * (group-scale, list-scale); `npm run bench` drives a real server instead.
 */
export async function startInProcess(): Promise<InProcessRoster> {
  const logger = createLogger("warn");
  const externalUrl = process.env.ROSTER_DATABASE_URL;
  const cluster = externalUrl ? undefined : await startEmbedded({ dataDir: undefined, logger });
  const url = externalUrl ?? cluster?.url ?? "";
  const schema = externalUrl ? `bench_${randomBytes(4).toString("hex")}` : undefined;
  if (schema !== undefined) await withClient(url, (c) => c.query(`create schema ${quoteIdent(schema)}`));
  const storage = openDatabase({ url, schema });
  await migrate(storage.db, schema);
  const app = await buildApp({
    db: storage.db,
    clock: systemClock,
    logger,
    secrets: [Buffer.from("bench-secret-bench-secret-bench-secret-0123")],
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    publicUrl: () => "http://bench.local",
  });
  await app.ready();
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  return {
    app,
    db: storage.db,
    external: externalUrl !== undefined,
    async scimClient() {
      const org = (
        await app.inject({
          method: "POST",
          url: "/v2alpha1/admin/organizations",
          headers: admin,
          payload: { name: "b" },
        })
      ).json() as { id: string };
      const client = (
        await app.inject({
          method: "POST",
          url: "/v2alpha1/admin/scimClients",
          headers: admin,
          payload: { organization_id: org.id, secret: SCIM_SECRET },
        })
      ).json() as { client_id: string };
      return {
        organizationId: org.id,
        base: `/scim/${client.client_id}/v2`,
        headers: { authorization: `Bearer ${SCIM_SECRET}`, "content-type": "application/scim+json" },
      };
    },
    async close() {
      await app.close();
      await storage.close();
      if (schema !== undefined) await withClient(url, (c) => c.query(`drop schema ${quoteIdent(schema)} cascade`));
      await cluster?.stop();
    },
  };
}

async function withClient(connectionString: string, work: (c: pg.Client) => Promise<unknown>): Promise<void> {
  const c = new pg.Client({ connectionString });
  await c.connect();
  try {
    await work(c);
  } finally {
    await c.end();
  }
}
