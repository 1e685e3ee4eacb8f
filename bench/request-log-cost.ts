/**
 * What the SCIM request log in `all` mode costs per request, measured apart from the HTTP path so that a loaded
 * host's noise does not drown it: the CPU Roster spends building a redacted entry (the background writer's work, a
 * batch at a time; the onResponse hook only queues references), sending it as a row of the batch's one insert, and
 * the CPU PostgreSQL spends storing it. Resource ids are drawn from 2 000 users, as in `npm run bench`.
 * Run: npx tsx bench/request-log-cost.ts [entries=20000]
 */
import { performance } from "node:perf_hooks";
import { RequestLogRepo } from "../src/observability/request-log/repo.js";
import { monotonicUuidv7Source } from "../src/observability/ids.js";
import { requestLogEntry } from "../src/observability/request-log/entry.js";

const ids = monotonicUuidv7Source();
import { uuidv7 } from "../src/platform/ids.js";
import { sampleStoredUser, sampleUser, sampleUserId } from "./lib/sample-user.js";
import { createLogger } from "../src/platform/logger.js";
import { openDatabase } from "../src/storage/database.js";
import { migrate } from "../src/storage/migrate.js";
import { startEmbedded } from "../src/storage/embedded.js";
import { postgresCpuReader } from "./lib/cpu.js";

const ENTRIES = Number(process.argv[2] ?? 20_000);
const BATCH = 500;
const client = { clientId: "bench-client", organizationId: uuidv7() };
const userId = sampleUserId;
const user = sampleUser;
const stored = sampleStoredUser;
const patch = {
  schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
  Operations: [{ op: "replace", path: "name.givenName", value: "Grace" }],
};
const OPS = {
  create: { method: "POST", byId: false, status: 201, body: user },
  patch: { method: "PATCH", byId: true, status: 200, body: patch },
  get: { method: "GET", byId: true, status: 200, body: undefined },
} as const;
const users = Array.from({ length: 2_000 }, () => uuidv7());

function entry(op: keyof typeof OPS, i: number) {
  const o = OPS[op];
  const resourceId = users[i % users.length] ?? userId;
  return requestLogEntry(
    {
      client,
      time: Date.now(),
      method: o.method,
      url: `/scim/bench-client/v2/Users${o.byId ? `/${resourceId}` : ""}`,
      status: o.status,
      ms: 3.2,
      resourceId,
      requestBody: o.body,
      responsePayload: stored,
      userAgent: `Okta SCIM Client 1.0.0 #${i}`,
    },
    ids,
  );
}

const lines: string[] = [];
for (const op of Object.keys(OPS) as Array<keyof typeof OPS>) {
  for (let i = 0; i < 2_000; i++) entry(op, i); // warm-up (JIT)
  const cpu = process.cpuUsage();
  const start = performance.now();
  const n = 50_000;
  for (let i = 0; i < n; i++) entry(op, i);
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - start;
  lines.push(
    `${op}: the writer builds an entry in ${((used.user + used.system) / n) | 0 || "<1"} µs CPU (${((wall * 1000) / n).toFixed(1)} µs wall)`,
  );
}

const logger = createLogger("warn");
const cluster = await startEmbedded({ dataDir: undefined, logger });
const { db, close } = openDatabase({ url: cluster.url, poolSize: 2, synchronousCommit: false });
try {
  await migrate(db);
  const repo = new RequestLogRepo(db);
  const pgCpu = await postgresCpuReader(cluster.url);
  for (const op of Object.keys(OPS) as Array<keyof typeof OPS>) {
    const rows = Array.from({ length: ENTRIES }, (_, i) => entry(op, i));
    const before = pgCpu.read();
    const rosterBefore = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < rows.length; i += BATCH) await repo.insert(rows.slice(i, i + BATCH));
    const wall = performance.now() - start;
    const pgMs = pgCpu.read() - before;
    const roster = process.cpuUsage(rosterBefore);
    lines.push(
      `${op}: PostgreSQL stores an entry in ${((pgMs * 1000) / ENTRIES).toFixed(1)} µs CPU, Roster sends it in ` +
        `${((roster.user + roster.system) / ENTRIES).toFixed(1)} µs CPU (${BATCH} a batch; ` +
        `${((wall * 1000) / ENTRIES).toFixed(1)} µs wall)`,
    );
  }
} finally {
  await close();
  await cluster.stop();
}
process.stdout.write(`${lines.join("\n")}\n`);
