import fc from "fast-check";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { expect } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { ERROR_SCHEMA } from "../helpers/constants.js";

/**
 * The fuzz suite's properties and budget. `npm test` runs a bounded share of FUZZ_RUNS (default 5 000 cases over
 * all fuzz files, each property once with a fixed seed and once with a random one that is printed for replay);
 * `FUZZ_RUNS=100000 npm run fuzz` runs as many as asked. `FUZZ_SEED=N` replays a printed seed.
 */
export const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
export const FIXED_SEED = 20_261_123;

export type Protocol = "scim" | "admin";

/** Cases of one property, from its share of the total (the shares of all fuzz files add up to 1). */
export const runsFor = (share: number): number => Math.max(1, Math.round(TOTAL_RUNS * share));

/** A test's time limit for `runs` cases: ~40 ms a case on a loaded machine, at least a minute. */
export const timeoutFor = (runs: number): number => Math.max(60_000, runs * 40);

/**
 * Runs a property twice, half the cases each: with the fixed seed (the same cases every run) and with a fresh
 * seed printed for reproduction.
 */
export async function check<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  runs: number,
  run: (value: T) => Promise<void>,
) {
  const replay = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
  const random = replay ?? Math.floor(Math.random() * 2 ** 31);
  const half = Math.max(1, Math.floor(runs / 2));
  const seeds = replay === undefined ? [FIXED_SEED, random] : [replay];
  const started = Date.now();
  statuses.clear();
  for (const seed of seeds) {
    if (seed !== FIXED_SEED) console.log(`fuzz ${name}: seed ${seed} (replay with FUZZ_SEED=${seed})`);
    await fc.assert(
      fc.asyncProperty(arbitrary, async (value) => {
        await run(value);
      }),
      { seed, numRuns: replay === undefined ? half : runs, endOnFailure: true },
    );
  }
  const counts = [...statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
  console.log(
    `fuzz ${name}: ${[...statuses.values()].reduce((a, b) => a + b, 0)} requests in ${Date.now() - started} ms: ${counts.join(" ")}`,
  );
}

/** Answers by status of the property running now, printed when it ends (a run that only sees 400s tests little). */
const statuses = new Map<number, number>();
export const countStatus = (status: number): void => {
  statuses.set(status, (statuses.get(status) ?? 0) + 1);
};

/** Never a 5xx; a 4xx in the protocol's error body and content type. */
export function expectProtocolAnswer(res: LightMyRequestResponse, protocol: Protocol, what: string): void {
  const context = `${what} → ${res.statusCode} ${res.body.slice(0, 300)}`;
  expect(res.statusCode, context).toBeLessThan(500);
  // A HEAD answer has headers only.
  if (res.statusCode < 400 || res.body === "") {
    if (res.statusCode >= 400) expect(what.startsWith("HEAD"), `${context}: a 4xx without a body`).toBe(true);
    return;
  }
  const type = String(res.headers["content-type"] ?? "");
  if (protocol === "scim") {
    expect(type, context).toMatch(/^application\/scim\+json/);
    const body = res.json() as { schemas?: unknown; status?: unknown };
    expect(body.schemas, context).toEqual([ERROR_SCHEMA]);
    expect(body.status, context).toBe(String(res.statusCode));
  } else {
    expect(type, context).toMatch(/^application\/json/);
    const body = res.json() as { error?: { code?: unknown; status?: unknown; message?: unknown } };
    expect(body.error?.code, context).toBe(res.statusCode);
    expect(typeof body.error?.status, context).toBe("string");
    expect(typeof body.error?.message, context).toBe("string");
  }
}

const TABLES = [
  "organizations",
  "scim_clients",
  "identities",
  "identity_identifiers",
  "directory_groups",
  "group_user_members",
  "group_group_members",
  "api_keys",
  "api_key_secrets",
  "webhook_outbox",
];

/**
 * Every row's count and transaction ids, per table: any insert, update or delete changes it (xmin is the writing
 * transaction's id), whatever the clock says. Cheap for the few thousand rows a fuzz run makes.
 */
export async function fingerprint(t: TestApp): Promise<string> {
  const parts = TABLES.map(
    (table) => sql`(select count(*) || ':' || coalesce(sum(xmin::text::bigint), 0) from ${sql.table(table)})`,
  );
  const { rows } = await sql<{ f: string }>`select concat_ws('|', ${sql.join(parts)}) as f`.execute(t.db);
  return rows[0]?.f ?? "";
}

/**
 * Sends one request and checks the properties: an answer (never a dropped request), never a 5xx, the protocol's
 * error format on 4xx, and no change to any table when the request was refused.
 */
export async function send(t: TestApp, protocol: Protocol, options: InjectOptions): Promise<LightMyRequestResponse> {
  // The state after a refused request is the state before the next one: one query per case where nothing changed.
  const before = known.get(t) ?? (await fingerprint(t));
  known.delete(t);
  const res = await t.request(options);
  countStatus(res.statusCode);
  const what = `${options.method} ${String(options.url).slice(0, 200)} ${String(options.payload ?? "").slice(0, 300)}`;
  expectProtocolAnswer(res, protocol, what);
  if (res.statusCode >= 400) {
    expect(await fingerprint(t), `state changed by a refused ${what}`).toBe(before);
    known.set(t, before);
  }
  return res;
}

const known = new WeakMap<TestApp, string>();

export async function expectReady(t: TestApp): Promise<void> {
  const res = await t.request({ method: "GET", url: "/health/ready" });
  expect(res.statusCode).toBe(200);
}
