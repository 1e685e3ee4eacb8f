import type { Dispatcher } from "undici";
import type { OpName } from "./config.js";
import { describeReply, jsonOf, type RequestSpec, send } from "./http.js";
import {
  addMembers,
  createGroup,
  createUser,
  listUsers,
  measurementTag,
  patchUser,
  type ScimTarget,
  seededUserName,
  userBody,
} from "./scim.js";
import type { Seeded } from "./seed.js";

export interface OpContext {
  readonly pool: Dispatcher;
  readonly target: ScimTarget;
  readonly users: readonly Seeded[];
  readonly groups: readonly Seeded[];
  /** Why users or groups could not be seeded, when they could not. */
  readonly usersUnavailable: string | undefined;
  readonly groupsUnavailable: string | undefined;
}

export type Preparation =
  | { readonly kind: "ready"; readonly next: (n: number) => RequestSpec; readonly note?: string }
  | { readonly kind: "unavailable"; readonly reason: string };

export interface OpDefinition {
  readonly name: Exclude<OpName, "webhook">;
  /** What one request does, for the table and docs. */
  readonly describe: string;
  readonly needs: readonly ("users" | "groups")[];
  readonly prepare: (ctx: OpContext) => Promise<Preparation>;
}

const PAGE = 100;
const MEMBERS_PER_PATCH = 10;
const DEEP_CURSORS = 10;
const GROUP_GET_MEMBERS = 100;

/** The n-th element, cycling (n may be negative: probes use -1). */
export function pick<T>(items: readonly T[], n: number): T {
  const item = items[((n % items.length) + items.length) % items.length];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

const ready = (next: (n: number) => RequestSpec, note?: string): Preparation =>
  note === undefined ? { kind: "ready", next } : { kind: "ready", next, note };

export const OPERATIONS: readonly OpDefinition[] = [
  {
    name: "get",
    describe: "GET /Users/{id}, a different seeded user each request",
    needs: ["users"],
    prepare: async ({ target, users }) =>
      ready((n) => ({ method: "GET", path: `${target.base}/Users/${pick(users, n).id}` })),
  },
  {
    name: "filter",
    describe: 'GET /Users?filter=userName eq "…", a different seeded user each request',
    needs: ["users"],
    prepare: async ({ target, users }) =>
      ready((n) => listUsers(target, { filter: `userName eq "${seededUserName(pick(users, n).n)}"` })),
  },
  {
    name: "list_1",
    describe: "GET /Users?startIndex=1&count=100",
    needs: ["users"],
    prepare: async ({ target }) => ready(() => listUsers(target, { startIndex: "1", count: String(PAGE) })),
  },
  {
    name: "list_4901",
    describe: "GET /Users?startIndex=4901&count=100",
    needs: ["users"],
    prepare: async ({ target, users }) =>
      ready(
        () => listUsers(target, { startIndex: "4901", count: String(PAGE) }),
        users.length < 5000 ? `only ${users.length} users: the page is short or empty` : undefined,
      ),
  },
  {
    name: "cursor_first",
    describe: "GET /Users?count=100&cursor= (first cursor page)",
    needs: ["users"],
    prepare: async ({ target }) => ready(() => listUsers(target, { count: String(PAGE), cursor: "" })),
  },
  {
    name: "cursor_deep",
    describe: "GET /Users?count=100&cursor=<cursor at depth ≥ 90 % of N>",
    needs: ["users"],
    prepare: prepareDeepCursor,
  },
  {
    name: "group_get",
    describe: `GET /Groups/{id} of a group of ${GROUP_GET_MEMBERS} members, a different seeded group each request`,
    needs: ["users", "groups"],
    prepare: prepareGroupGet,
  },
  {
    name: "patch",
    describe: "PATCH /Users/{id} replacing active and displayName (a displayName no earlier request set)",
    needs: ["users"],
    prepare: async ({ target, users }) => {
      // Unique per measurement: a round that set the displayName of an earlier round's request would write nothing.
      const run = ` ${measurementTag()}`;
      return ready((n) => patchUser(target, pick(users, n).id, n, run));
    },
  },
  {
    name: "put",
    describe: "PUT /Users/{id} with the full user, a displayName no earlier request set",
    needs: ["users"],
    prepare: async ({ target, users }) => {
      const run = measurementTag();
      return ready((n) => {
        const user = pick(users, n);
        const body = userBody(seededUserName(user.n), user.n, `Put ${n} ${run}`);
        return { method: "PUT", path: `${target.base}/Users/${user.id}`, body: JSON.stringify(body) };
      });
    },
  },
  {
    name: "create",
    describe: "POST /Users, a unique userName, no password",
    needs: [],
    prepare: async ({ target }) => {
      // Unique per measurement: an operation measured again (REQUEST_LOG=compare rounds) creates new users.
      const run = measurementTag();
      return ready((n) => createUser(target, `new${n}.${run}@bench.example`, n));
    },
  },
  {
    name: "group_create",
    describe: "POST /Groups",
    needs: [],
    prepare: async ({ target }) => ready((n) => createGroup(target, `New group ${n}`)),
  },
  {
    name: "group_patch",
    describe: "PATCH /Groups/{id} adding 10 members not yet in the group",
    needs: ["users", "groups"],
    prepare: async ({ target, users, groups }) =>
      ready((n) => {
        // Group n % M gets users at a window that moves by 10 each time round the groups: always new members.
        const round = Math.floor(n / groups.length);
        const members = Array.from({ length: MEMBERS_PER_PATCH }, (_, j) => pick(users, round * 10 + j).id);
        return addMembers(target, pick(groups, n).id, members);
      }),
  },
];

/**
 * Walks the cursor chain once (cursors bind count, filter and attributes: same count as the measured request) and
 * keeps ten cursors from depth ≥ 90 % of the users, or the deepest one when the chain ends before that depth.
 */
async function prepareDeepCursor({ pool, target, users }: OpContext): Promise<Preparation> {
  const depth = Math.ceil(users.length * 0.9);
  let seen = 0;
  let cursor = "";
  let deep: { cursor: string; at: number }[] = [];
  for (;;) {
    const reply = await send(pool, target, listUsers(target, { count: String(PAGE), cursor }));
    if (reply.status < 200 || reply.status > 299) {
      return { kind: "unavailable", reason: `cursor walk at depth ${seen}: ${describeReply(reply)}` };
    }
    const body = jsonOf(reply);
    seen += Array.isArray(body.Resources) ? body.Resources.length : 0;
    const next = body.nextCursor;
    if (typeof next !== "string" || next === "") break;
    cursor = next;
    deep.push({ cursor: next, at: seen });
    // Below the target depth keep only the deepest cursors seen so far; past it, stop at ten.
    if (seen < depth) deep = deep.slice(-DEEP_CURSORS);
    else if (deep.filter((d) => d.at >= depth).length >= DEEP_CURSORS) break;
  }
  const reached = deep.filter((d) => d.at >= depth);
  const chosen = reached.length > 0 ? reached : deep.slice(-1);
  const first = chosen[0];
  if (first === undefined) return { kind: "unavailable", reason: `the cursor chain has one page (${seen} users)` };
  const shortOf = reached.length > 0 ? "" : ` (the chain ends before ${depth})`;
  return ready(
    (n) => listUsers(target, { count: String(PAGE), cursor: pick(chosen, n).cursor }),
    `${chosen.length} cursor${chosen.length === 1 ? "" : "s"} from depth ${first.at} of ${users.length}${shortOf}`,
  );
}

/** Groups given their members already (an operation is prepared again in each REQUEST_LOG=compare round). */
const filledGroups = new Set<string>();

/**
 * Gives every seeded group 100 members before the first measurement (group n: users 100·n to 100·n + 99, cycling),
 * so that a GET renders members as an IdP's read of a group does; the seeded groups are otherwise empty.
 */
async function prepareGroupGet({ pool, target, users, groups }: OpContext): Promise<Preparation> {
  for (const [n, group] of groups.entries()) {
    if (filledGroups.has(group.id)) continue;
    const members = Array.from({ length: GROUP_GET_MEMBERS }, (_, j) => pick(users, n * GROUP_GET_MEMBERS + j).id);
    const reply = await send(pool, target, addMembers(target, group.id, members));
    if (reply.status < 200 || reply.status > 299) {
      return { kind: "unavailable", reason: `adding members to group ${n}: ${describeReply(reply)}` };
    }
    filledGroups.add(group.id);
  }
  return ready((n) => ({ method: "GET", path: `${target.base}/Groups/${pick(groups, n).id}` }));
}
