import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Config } from "../config.js";
import type { Logger } from "../platform/logger.js";
import { checkPoolerSession, type Db, migrate, type OpenDatabase, openDatabase } from "./database.js";
import { type EmbeddedCluster, startEmbedded } from "./embedded.js";

/** Connections of the webhook dispatcher's bookkeeping (claims, attempts): few, and `synchronous_commit = off`. */
export const BOOKKEEPING_POOL_SIZE = 4;
/** Connections for the hot SCIM reads (GET and list of users), with generic plans (DatabaseOptions.genericPlans). */
export const READS_POOL_SIZE = 10;
/** Connections for everything else: writes, transactions, admin API. */
export const MAIN_POOL_SIZE = 10;

export interface Storage extends OpenDatabase {
  /** The same database without synchronous commit: only for the webhook dispatcher's bookkeeping. */
  readonly bookkeeping: Db;
  /** The same database with generic plans: only for the hot reads (AppDeps.reads). */
  readonly reads: Db;
  readonly secrets: readonly Buffer[];
  readonly engine: "embedded" | "server";
}

/** Opens PostgreSQL — the embedded cluster or an existing server, same code and SQL — and migrates it. */
export async function openStorage(config: Config, logger: Logger): Promise<Storage> {
  let cluster: EmbeddedCluster | undefined;
  let url: string;
  const pooling = config.database.kind === "server" ? config.database.pooling : "session";
  if (config.database.kind === "server") url = config.database.url;
  else {
    cluster = await startEmbedded({
      dataDir: config.database.persistent ? config.dataDir : undefined,
      logger,
    });
    url = cluster.url;
  }
  try {
    const opened = openDatabase({ url, poolSize: MAIN_POOL_SIZE, pooling });
    if (pooling === "transaction") await checkPoolerSession(opened.db);
    await migrate(opened.db);
    const secrets = config.secrets ?? (await embeddedSecrets(config));
    const bookkeeping = openDatabase({ url, poolSize: BOOKKEEPING_POOL_SIZE, synchronousCommit: false, pooling });
    const reads = openDatabase({ url, poolSize: READS_POOL_SIZE, genericPlans: true, pooling });
    return {
      ...opened,
      bookkeeping: bookkeeping.db,
      reads: reads.db,
      secrets,
      engine: cluster === undefined ? "server" : "embedded",
      async close() {
        await reads.close();
        await bookkeeping.close();
        await opened.close();
        await cluster?.stop();
      },
    };
  } catch (e) {
    await cluster?.stop();
    throw e;
  }
}

/** Embedded engines keep generated ROSTER_SECRETS in the data dir (memory: keeps them in the process). */
async function embeddedSecrets(config: Config): Promise<Buffer[]> {
  if (config.database.kind === "embedded" && !config.database.persistent) return [randomBytes(48)];
  const dir = resolve(config.dataDir);
  await mkdir(dir, { recursive: true });
  const file = join(dir, "secrets");
  try {
    const keys = (await readFile(file, "utf8"))
      .trim()
      .split(",")
      .filter((k) => k !== "");
    if (keys.length > 0) return keys.map((k) => Buffer.from(k, "utf8"));
  } catch {
    // first start: generate below
  }
  const key = randomBytes(48).toString("base64url");
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return [Buffer.from(key, "utf8")];
}
