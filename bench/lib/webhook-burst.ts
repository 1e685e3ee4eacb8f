import type { Dispatcher } from "undici";
import type { CpuReader } from "./cpu.js";
import { describeReply, jsonOf, mapBounded, send } from "./http.js";
import { type WebhookReceiver, waitQuiet } from "./receiver.js";
import { addMembers, createGroup, type ScimTarget } from "./scim.js";
import type { Seeded } from "./seed.js";

export interface BurstResult {
  /** Group PATCH requests sent, and how many answered 2xx. */
  readonly requests: number;
  readonly ok: number;
  /** Members added: at least one `group.user_added` event each: one event per member added. */
  readonly membersAdded: number;
  readonly writeMs: number;
  readonly deliveries: number;
  readonly events: Record<string, number>;
  /** Deliveries from the first to the last one, per second. */
  readonly eventsPerSecond: number;
  /** How long after the last write the last delivery arrived. */
  readonly drainMs: number;
  /** True when the drain stopped at the time limit with events still to come. */
  readonly cutShort: boolean;
  readonly firstError?: string;
  /** Roster's and PostgreSQL's CPU from the first write to the last delivery, per delivery (writes included). */
  readonly rosterCpuMsPerEvent: number;
  readonly postgresCpuMsPerEvent: number;
}

const GROUPS = 20;
const MEMBERS_PER_REQUEST = 50;
const REQUESTS_PER_GROUP = 5;
const DRAIN_LIMIT_MS = 60_000;
const QUIET_MS = 3_000;

/**
 * The dispatcher's capacity: membership PATCHes emit many events per request, faster than single-user writes can, so
 * a backlog builds and its drain rate is what the dispatcher sustains (up to 5 000 events in one burst).
 */
export async function membershipBurst(
  pool: Dispatcher,
  hooked: ScimTarget,
  receiver: WebhookReceiver,
  users: readonly Seeded[],
  connections: number,
  cpu: { readonly roster: CpuReader; readonly postgres: CpuReader },
): Promise<BurstResult | { unavailable: string }> {
  const perGroup = Math.min(users.length, MEMBERS_PER_REQUEST * REQUESTS_PER_GROUP);
  if (perGroup < MEMBERS_PER_REQUEST) return { unavailable: `needs ≥ ${MEMBERS_PER_REQUEST} seeded users` };
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    const reply = await send(pool, hooked, createGroup(hooked, `Burst group ${g}`));
    const id = jsonOf(reply).id;
    if (reply.status !== 201 || typeof id !== "string") return { unavailable: `POST /Groups: ${describeReply(reply)}` };
    groups.push(id);
  }
  await waitQuiet(receiver, 30_000);
  receiver.reset();

  const batches: { group: string; members: string[] }[] = [];
  for (let r = 0; r * MEMBERS_PER_REQUEST < perGroup; r++) {
    const members = users.slice(r * MEMBERS_PER_REQUEST, (r + 1) * MEMBERS_PER_REQUEST).map((u) => u.id);
    for (const group of groups) batches.push({ group, members });
  }
  let ok = 0;
  let membersAdded = 0;
  let firstError: string | undefined;
  const rosterCpuAtStart = cpu.roster();
  const postgresCpuAtStart = cpu.postgres();
  const started = performance.now();
  await mapBounded(batches, connections, async ({ group, members }) => {
    const reply = await send(pool, hooked, addMembers(hooked, group, members));
    if (reply.status >= 200 && reply.status < 300) {
      ok++;
      membersAdded += members.length;
    } else firstError ??= describeReply(reply);
  });
  const writesEnded = performance.now();
  const cutShort = !(await drained(receiver, membersAdded));
  const counts = receiver.counts();
  // The drain ends up to QUIET_MS (or 100 ms) after the last delivery; idle time costs no CPU.
  const rosterCpuMs = cpu.roster() - rosterCpuAtStart;
  const postgresCpuMs = cpu.postgres() - postgresCpuAtStart;
  const span = counts.firstAt === undefined || counts.lastAt === undefined ? 0 : counts.lastAt - counts.firstAt;
  return {
    requests: batches.length,
    ok,
    membersAdded,
    writeMs: writesEnded - started,
    deliveries: counts.deliveries,
    events: counts.events,
    eventsPerSecond: span > 0 ? ((counts.deliveries - 1) * 1000) / span : Number.NaN,
    drainMs: counts.lastAt === undefined ? Number.NaN : Math.max(0, counts.lastAt - writesEnded),
    cutShort,
    ...(firstError === undefined ? {} : { firstError }),
    rosterCpuMsPerEvent: rosterCpuMs / Math.max(1, counts.deliveries),
    postgresCpuMsPerEvent: postgresCpuMs / Math.max(1, counts.deliveries),
  };
}

/** Until `expected` deliveries came, none came for QUIET_MS, or DRAIN_LIMIT_MS passed (then false). */
async function drained(receiver: WebhookReceiver, expected: number): Promise<boolean> {
  const deadline = performance.now() + DRAIN_LIMIT_MS;
  let last = receiver.counts().deliveries;
  let lastChange = performance.now();
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const now = receiver.counts().deliveries;
    if (now >= expected) return true;
    if (now !== last) {
      last = now;
      lastChange = performance.now();
    } else if (performance.now() - lastChange > QUIET_MS) return true;
  }
  return false;
}
