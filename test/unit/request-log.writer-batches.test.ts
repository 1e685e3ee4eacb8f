import { expect, it } from "vitest";
import type { ObservedRequest } from "../../src/observability/request-log/entry.js";
import type { RequestLogEntry, RequestLogStore } from "../../src/observability/request-log/repo.js";
import { RequestLogWriter } from "../../src/observability/request-log/writer.js";
import { systemClock } from "../../src/platform/clock.js";
import { createLogger } from "../../src/platform/logger.js";

/** A store whose writes finish only when the test says so. */
function heldStore() {
  const batches: RequestLogEntry[][] = [];
  const waiting: Array<() => void> = [];
  const store: RequestLogStore = {
    insert: (rows) => {
      batches.push([...rows]);
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    addCounts: async () => {},
  };
  /** Lets the write in flight finish, and waits until the writer has moved on. */
  const release = async () => {
    waiting.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { store, batches, release };
}

const writerOver = (store: RequestLogStore, batchSize: number) =>
  new RequestLogWriter({ store, clock: systemClock, logger: createLogger("silent"), onDrop: () => {}, batchSize });

const request = (n: number): ObservedRequest => ({
  client: { clientId: "writer-batches", organizationId: "01900000-0000-7000-8000-000000000000" },
  time: Date.UTC(2026, 10, 25) + n,
  method: "GET",
  url: `/scim/writer-batches/v2/Users/${n}`,
  status: 200,
  ms: 1,
  resourceId: String(n),
  requestBody: undefined,
  responsePayload: "{}",
  userAgent: undefined,
});

it("writes whole batches under load, and the rest of the buffer only when flushed", async () => {
  const { store, batches, release } = heldStore();
  const writer = writerOver(store, 10);
  for (let n = 0; n < 10; n++) writer.enqueue(request(n));
  expect(batches.map((b) => b.length)).toEqual([10]);
  // 25 more arrive while the first batch is being written.
  for (let n = 10; n < 35; n++) writer.enqueue(request(n));
  await release();
  await release();
  await release();
  // Two more whole batches, not the 25 at once nor a trickle of whatever arrived meanwhile; 5 wait.
  expect(batches.map((b) => b.length)).toEqual([10, 10, 10]);
  expect(writer.buffered).toBe(5);
  const flushed = writer.flush();
  await release();
  await flushed;
  expect(batches.map((b) => b.length)).toEqual([10, 10, 10, 5]);
  expect(batches.flat().map((row) => row.resource_id)).toEqual(Array.from({ length: 35 }, (_, n) => String(n)));
  expect(writer.buffered).toBe(0);
});

it("a flush asked for while a batch is in flight writes what was buffered when it was asked, after that batch", async () => {
  const { store, batches, release } = heldStore();
  const writer = writerOver(store, 4);
  for (let n = 0; n < 6; n++) writer.enqueue(request(n));
  expect(batches.map((b) => b.length)).toEqual([4]);
  let done = false;
  const flushed = writer.flush().then(() => {
    done = true;
  });
  await release();
  expect(batches.map((b) => b.length)).toEqual([4, 2]);
  expect(done).toBe(false);
  await release();
  await flushed;
  expect(done).toBe(true);
});
