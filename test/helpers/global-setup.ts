import type { TestProject } from "vitest/node";
import { createLogger } from "../../src/platform/logger.js";
import { buildPortal } from "../../src/portal/build.js";
import { type EmbeddedCluster, startEmbedded } from "../../src/storage/embedded.js";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

let cluster: EmbeddedCluster | undefined;

/**
 * One real PostgreSQL per test run: the server named by ROSTER_TEST_DATABASE_URL, or an embedded cluster
 * (so `npm test` needs no PostgreSQL installed). Each test file then works in a fresh schema of its own.
 */
export async function setup(project: TestProject): Promise<void> {
  // The portal's tests need its built assets; `npm install` builds them, this covers a tree changed since.
  await buildPortal(() => {});
  let url = process.env.ROSTER_TEST_DATABASE_URL;
  if (url === undefined || url === "") {
    cluster = await startEmbedded({ dataDir: undefined, logger: createLogger("warn") });
    url = cluster.url;
  }
  project.provide("databaseUrl", url);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}
