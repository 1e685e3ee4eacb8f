import type { Dispatcher } from "undici";
import type { CpuReader } from "./cpu.js";
import { describeReply, send } from "./http.js";
import { type Measurement, measure } from "./measure.js";
import { pick } from "./ops.js";
import { type ReceiverCounts, type WebhookReceiver, waitQuiet } from "./receiver.js";
import { type BurstResult, membershipBurst } from "./webhook-burst.js";
import { patchUser, type ScimTarget } from "./scim.js";
import { isMissingEndpoint, type Seeded } from "./seed.js";

export interface WebhookOptions {
  readonly pool: Dispatcher;
  /** The SCIM client without a webhook, and one of the same organization with the receiver as its webhook. */
  readonly plain: ScimTarget;
  readonly hooked: ScimTarget;
  readonly receiver: WebhookReceiver;
  readonly users: readonly Seeded[];
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly serverCpu: CpuReader;
  readonly postgresCpu: CpuReader;
}

export type WebhookResult =
  | { readonly status: "unavailable"; readonly reason: string }
  | {
      readonly status: "ok";
      /** PATCH /Users/{id} through the client without a webhook, then through the one with it. */
      readonly without: Measurement;
      readonly with: Measurement;
      readonly addedP99Ms: number;
      /** p50 with minus p50 without: steadier than the p99 difference on a busy machine. */
      readonly addedP50Ms: number;
      /** 2xx writes of the with-webhook phase, warm-up included: each should produce one event. */
      readonly writes: number;
      readonly deliveries: number;
      readonly distinctIds: number;
      readonly events: Record<string, number>;
      /** Deliveries from the first to the last one, per second; bounded by the write rate when drainMs is small. */
      readonly eventsPerSecond: number;
      /** How long after the last write the last delivery arrived. */
      readonly drainMs: number;
      /** Deliveries seen while writing through the client without a webhook (should be 0). */
      readonly deliveriesWithoutWebhook: number;
      /** The dispatcher's drain rate under a backlog of membership events. */
      readonly burst: BurstResult | { readonly unavailable: string };
    };

const PROBE_WAIT_MS = 5_000;
const QUIET_MS = 3_000;
const DRAIN_LIMIT_MS = 120_000;

/**
 * Webhook dispatch: the p99 a webhook adds to a SCIM write, and how fast a burst of writes is delivered
 * to a receiver that answers 200 at once. Every PATCH changes displayName, so each one is an event.
 */
export async function measureWebhook(o: WebhookOptions): Promise<WebhookResult> {
  if (o.users.length === 0) return { status: "unavailable", reason: "no seeded users to write to" };
  const probe = await send(o.pool, o.hooked, patchUser(o.hooked, pick(o.users, -1).id, -1));
  if (isMissingEndpoint(probe.status) || probe.status > 299) {
    return { status: "unavailable", reason: `PATCH /Users/{id} answered ${describeReply(probe)}` };
  }
  if (!(await waitFor(() => o.receiver.counts().deliveries > 0, PROBE_WAIT_MS))) {
    return { status: "unavailable", reason: `no delivery within ${PROBE_WAIT_MS / 1000} s of a write` };
  }
  await waitQuiet(o.receiver, 30_000);
  o.receiver.reset();

  const run = (target: ScimTarget, offset: number) =>
    measure({
      endpoint: target,
      connections: o.connections,
      warmupMs: o.warmupMs,
      durationMs: o.durationMs,
      next: (n) => patchUser(target, pick(o.users, n).id, offset + n),
      serverCpu: o.serverCpu,
      postgresCpu: o.postgresCpu,
    });
  const without = await run(o.plain, 10_000_000);
  await waitQuiet(o.receiver, 30_000);
  const deliveriesWithoutWebhook = o.receiver.counts().deliveries;
  o.receiver.reset();

  const withHook = await run(o.hooked, 20_000_000);
  const writesEnded = performance.now();
  const writes = withHook.okTotal;
  await waitFor(() => o.receiver.counts().deliveries >= writes, DRAIN_LIMIT_MS, o.receiver);
  const counts = o.receiver.counts();
  await waitQuiet(o.receiver, 30_000);
  const burst = await membershipBurst(o.pool, o.hooked, o.receiver, o.users, o.connections, {
    roster: o.serverCpu,
    postgres: o.postgresCpu,
  });
  return {
    status: "ok",
    without,
    with: withHook,
    addedP99Ms: withHook.p99 - without.p99,
    addedP50Ms: withHook.p50 - without.p50,
    writes,
    deliveries: counts.deliveries,
    distinctIds: counts.distinctIds,
    events: counts.events,
    eventsPerSecond: rate(counts),
    drainMs: counts.lastAt === undefined ? Number.NaN : Math.max(0, counts.lastAt - writesEnded),
    deliveriesWithoutWebhook,
    burst,
  };
}

function rate(counts: ReceiverCounts): number {
  if (counts.firstAt === undefined || counts.lastAt === undefined || counts.deliveries < 2) return Number.NaN;
  return ((counts.deliveries - 1) * 1000) / (counts.lastAt - counts.firstAt);
}

/**
 * Polls `done` until true or `limitMs`; with a receiver, also gives up once no delivery arrived for QUIET_MS
 * (events lost or never emitted must not hold the run).
 */
async function waitFor(done: () => boolean, limitMs: number, receiver?: WebhookReceiver): Promise<boolean> {
  const deadline = performance.now() + limitMs;
  let lastCount = receiver?.counts().deliveries ?? 0;
  let lastChange = performance.now();
  while (performance.now() < deadline) {
    if (done()) return true;
    await new Promise((r) => setTimeout(r, 50));
    if (receiver !== undefined) {
      const count = receiver.counts().deliveries;
      if (count !== lastCount) {
        lastCount = count;
        lastChange = performance.now();
      } else if (performance.now() - lastChange > QUIET_MS) return false;
    }
  }
  return done();
}
