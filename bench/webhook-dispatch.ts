/**
 * Webhook dispatch rate and the cost of recording events on a write.
 * Run: npx tsx bench/webhook-dispatch.ts [events=5000] [concurrency=64]
 * Uses a throwaway embedded PostgreSQL and a local receiver in its own process that answers 200 at once.
 */
import { performance } from "node:perf_hooks";
import { type DirectoryEvent, userEventData } from "../src/directory/events.js";
import { toScimClient } from "../src/directory/scim-clients/repo.js";
import { systemClock } from "../src/platform/clock.js";
import { SecretBox } from "../src/platform/crypto.js";
import { uuidv7 } from "../src/platform/ids.js";
import { createLogger } from "../src/platform/logger.js";
import { openDatabase } from "../src/storage/database.js";
import { migrate } from "../src/storage/migrate.js";
import { startEmbedded } from "../src/storage/embedded.js";
import { createWebhooks } from "../src/webhooks/index.js";
import { type ChildProcess, spawn } from "node:child_process";

const EVENTS = Number(process.argv[2] ?? 5000);
const CONCURRENCY = Number(process.argv[3] ?? 64);
const logger = createLogger("warn");

const cluster = await startEmbedded({ dataDir: undefined, logger });
const { db, close } = openDatabase({ url: cluster.url, poolSize: 20 });
/** The receiver runs in a child process, as a real one would: it answers 200 at once and counts requests. */
const RECEIVER = `
const http = require("node:http");
let count = 0;
const server = http.createServer((req, res) => {
  if (req.method === "GET") return res.end(String(count));
  req.resume();
  req.on("end", () => { count++; res.writeHead(200).end("ok"); });
});
server.keepAliveTimeout = 30000;
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;
const child: ChildProcess = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "pipe", "inherit"] });
const port = await new Promise<number>((resolve) =>
  child.stdout?.once("data", (d: Buffer) => resolve(Number(String(d).trim()))),
);
const receiver = { url: `http://127.0.0.1:${port}/hook` };
const receivedCount = async () => Number(await (await fetch(`http://127.0.0.1:${port}/count`)).text());
try {
  await migrate(db);
  const box = new SecretBox([Buffer.from("bench-secret-key-bench-secret-key-0123456789")]);
  const orgId = uuidv7();
  await db.insertInto("organizations").values({ id: orgId, name: "Bench" }).execute();
  const row = await db
    .insertInto("scim_clients")
    .values({
      client_id: "bench",
      name: "bench",
      organization_id: orgId,
      secret_hash: "x$y",
      webhook_url: receiver.url,
      webhook_secret_sealed: box.seal("whsec_bench"),
      log_webhook_events: false,
      update_time: new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const client = toScimClient(row);
  const webhooks = createWebhooks({
    db,
    clock: systemClock,
    logger,
    box,
    concurrency: CONCURRENCY,
    // The receiver is a local process: loopback must be allowed explicitly.
    urlAllow: ["127.0.0.1"],
  });
  const event = (id: string): DirectoryEvent => ({
    kind: "user.updated",
    resourceId: id,
    data: userEventData({
      id,
      userName: `${id}@example.com`,
      name: { givenName: "Bench", familyName: "User" },
      emails: [{ value: `${id}@example.com`, primary: true }],
      active: true,
    }),
  });

  // 1. Added latency of a write: the same small transaction with and without sink.record of one event.
  const write = async (withEvent: boolean) => {
    const started = performance.now();
    await db.transaction().execute(async (trx) => {
      await trx.updateTable("scim_clients").set({ update_time: new Date() }).where("client_id", "=", "bench").execute();
      if (withEvent) await webhooks.sink.record(trx, client, [event(uuidv7())]);
    });
    return performance.now() - started;
  };
  for (let i = 0; i < 200; i++) await write(i % 2 === 0); // warm-up
  const plain: number[] = [];
  const recorded: number[] = [];
  for (let i = 0; i < 1000; i++) {
    plain.push(await write(false));
    recorded.push(await write(true));
  }
  await db.deleteFrom("webhook_outbox").execute();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `write latency: without event median ${median(plain).toFixed(3)} ms, with 1 event median ${median(recorded).toFixed(3)} ms ` +
      `(added ${(median(recorded) - median(plain)).toFixed(3)} ms median, ${(mean(recorded) - mean(plain)).toFixed(3)} ms mean)`,
  );
  const hundred = performance.now();
  await db.transaction().execute((trx) =>
    webhooks.sink.record(
      trx,
      client,
      Array.from({ length: 100 }, () => event(uuidv7())),
    ),
  );
  console.log(`record 100 events in one transaction: ${(performance.now() - hundred).toFixed(2)} ms`);
  await db.deleteFrom("webhook_outbox").execute();

  // 2. Dispatch rate: EVENTS events, recorded in transactions of 100, then delivered by the running loop.
  for (const [label, keys] of [
    ["distinct resources", EVENTS],
    ["50 resources (ordering-bound)", 50],
  ] as const) {
    const base = await receivedCount();
    const ids = Array.from({ length: keys }, () => uuidv7());
    for (let i = 0; i < EVENTS; i += 100) {
      const batch = Array.from({ length: Math.min(100, EVENTS - i) }, (_, j) => event(ids[(i + j) % keys] ?? ""));
      await db.transaction().execute((trx) => webhooks.sink.record(trx, client, batch));
    }
    const started = performance.now();
    const cpu = process.cpuUsage();
    webhooks.dispatcher.start();
    while ((await receivedCount()) - base < EVENTS) await new Promise((r) => setTimeout(r, 5));
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuShare = (used.user + used.system) / 1e6 / seconds;
    await webhooks.dispatcher.stop();

    console.log(
      `dispatch (${label}, concurrency ${CONCURRENCY}): ${EVENTS} events in ${seconds.toFixed(2)} s = ` +
        `${Math.round(EVENTS / seconds)} events/s (Roster process CPU ${Math.round(cpuShare * 100)}%, ` +
        `${((used.user + used.system) / 1000 / EVENTS).toFixed(3)} ms per event)`,
    );
  }
} finally {
  child.kill();
  await close();
  await cluster.stop();
}
