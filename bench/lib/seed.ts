import type { Dispatcher } from "undici";
import { describeReply, jsonOf, mapBounded, type RequestSpec, send } from "./http.js";
import { createGroup, createUser, type ScimTarget, seededUserName } from "./scim.js";

export interface Seeded {
  /** The seed number the resource was created from (its userName or displayName derives from it). */
  readonly n: number;
  readonly id: string;
}

export interface SeedResult {
  /** The resources that were created, in seed order. */
  readonly created: Seeded[];
  /** Why nothing could be seeded (the endpoint is missing), if so. */
  readonly unavailable?: string;
  readonly failures: number;
  readonly firstFailure?: string;
  readonly ms: number;
}

/** 404/405 on an endpoint that should exist: the feature has not landed yet. */
export const isMissingEndpoint = (status: number): boolean => status === 404 || status === 405;

export function seedUsers(
  pool: Dispatcher,
  target: ScimTarget,
  count: number,
  concurrency: number,
): Promise<SeedResult> {
  return seed(pool, target, count, concurrency, "users", (n) => createUser(target, seededUserName(n), n));
}

export function seedGroups(
  pool: Dispatcher,
  target: ScimTarget,
  count: number,
  concurrency: number,
): Promise<SeedResult> {
  return seed(pool, target, count, concurrency, "groups", (n) => createGroup(target, `Bench group ${n}`));
}

/** Creates `count` resources through SCIM, `concurrency` in flight; the first one probes the endpoint. */
async function seed(
  pool: Dispatcher,
  target: ScimTarget,
  count: number,
  concurrency: number,
  what: string,
  request: (n: number) => RequestSpec,
): Promise<SeedResult> {
  const started = performance.now();
  const first = request(0);
  const probe = await send(pool, target, first);
  if (isMissingEndpoint(probe.status)) {
    const path = first.path.replace(target.base, "");
    return { created: [], unavailable: `${first.method} ${path} answered ${describeReply(probe)}`, failures: 1, ms: 0 };
  }
  let failures = 0;
  let firstFailure: string | undefined;
  let done = 0;
  const progress = setInterval(() => {
    process.stderr.write(`bench: seeding ${what}: ${done}/${count}\n`);
  }, 5000);
  const record = (reply: { status: number; text: string }): string | undefined => {
    done++;
    const id = jsonOf(reply).id;
    if (reply.status === 201 && typeof id === "string") return id;
    failures++;
    firstFailure ??= describeReply(reply);
    return undefined;
  };
  try {
    const firstId = record(probe);
    const rest = await mapBounded(
      Array.from({ length: count - 1 }, (_, i) => i + 1),
      concurrency,
      async (n) => {
        try {
          return record(await send(pool, target, request(n)));
        } catch (e) {
          return record({ status: 0, text: e instanceof Error ? e.message : String(e) });
        }
      },
    );
    const created: Seeded[] = [];
    [firstId, ...rest].forEach((id, n) => {
      if (id !== undefined) created.push({ n, id });
    });
    return {
      created,
      failures,
      ...(firstFailure === undefined ? {} : { firstFailure }),
      ms: performance.now() - started,
    };
  } finally {
    clearInterval(progress);
  }
}
