import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createTestApp } from "../helpers/app.js";
import { createGroup, FULL_GROUP_PATCH, patchGroup } from "../helpers/groups.js";
import { insertIdentity } from "../helpers/identities.js";
import { scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import { GROUP_SCHEMA } from "../helpers/constants.js";

/**
 * Concurrent membership changes on overlapping groups never deadlock: each request succeeds or is refused with a 4xx
 * that names a cycle, and the nesting graph stays acyclic (docs/decisions.md "Group membership lock order").
 */
const { t, c } = useTestApp({ seed: FULL_GROUP_PATCH });

/** A small deterministic PRNG (mulberry32), so a failing mix can be replayed. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
};

const addMembers = (id: string, members: { value: string; type?: string }[]) =>
  patchGroup(t, c, id, [{ op: "add", path: "members", value: members }]);

type Outcome = { statusCode: number; body: string };

const refusedForACycle = (r: Outcome) => r.statusCode === 400 && /cycle|itself/.test(r.body);

/** The organization's nesting edges, read straight from the database, checked for a cycle by depth-first search. */
async function findCycle(orgId: string): Promise<string[] | undefined> {
  const { rows } = await sql<{ group_id: string; member_group_id: string }>`
    select group_id, member_group_id from group_group_members where organization_id = ${orgId}`.execute(t.db);
  const children = new Map<string, string[]>();
  for (const r of rows) children.set(r.group_id, [...(children.get(r.group_id) ?? []), r.member_group_id]);
  const state = new Map<string, "open" | "done">();
  const visit = (id: string, path: string[]): string[] | undefined => {
    if (state.get(id) === "open") return [...path, id];
    if (state.get(id) === "done") return undefined;
    state.set(id, "open");
    for (const child of children.get(id) ?? []) {
      const cycle = visit(child, [...path, id]);
      if (cycle !== undefined) return cycle;
    }
    state.set(id, "done");
    return undefined;
  };
  for (const id of children.keys()) {
    const cycle = visit(id, []);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

describe("concurrent nesting changes", () => {
  it("200 overlapping nesting and member PATCHes and PUTs: no 5xx, every refusal names a cycle, no cycle is stored", async () => {
    const groups = await Promise.all(Array.from({ length: 12 }, (_, i) => createGroup(t, c, `Mesh ${i}`)));
    const users = await Promise.all(
      Array.from({ length: 6 }, (_, i) => insertIdentity(t.db, c.organizationId, `mesh-${i}`)),
    );
    const random = prng(20261123);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    const requests = Array.from({ length: 200 }, (_, i) => {
      const target = pick(groups).id;
      const other = pick(groups.filter((g) => g.id !== target)).id;
      switch (i % 5) {
        case 0: // Entra's form: no type, inferred from the id.
          return addMembers(target, [{ value: other }, { value: pick(users) }]);
        case 1:
          return addMembers(target, [{ value: other, type: "Group" }]);
        case 2: // Okta's replace of the whole list, users and a group.
          return patchGroup(t, c, target, [
            { op: "replace", path: "members", value: [{ value: other }, { value: pick(users) }] },
          ]);
        case 3:
          return i % 2 === 0
            ? patchGroup(t, c, target, [{ op: "remove", path: `members[value eq "${other}"]` }])
            : scim(t, c, "PUT", `/Groups/${target}`, {
                schemas: [GROUP_SCHEMA],
                displayName: `Mesh put ${i}`,
                members: [{ value: other }, { value: pick(users) }],
              });
        default: // A plain user-member change on a group that other requests nest.
          return addMembers(target, [{ value: pick(users), type: "User" }]);
      }
    });
    const results = await Promise.all(requests);
    const unexpected = results.filter((r) => r.statusCode !== 200 && !refusedForACycle(r));
    expect(unexpected.map((r) => `${r.statusCode} ${r.body}`)).toEqual([]);
    expect(results.filter((r) => r.statusCode === 200).length).toBeGreaterThan(100);
    expect(await findCycle(c.organizationId)).toBeUndefined();
  });

  it("parent→child and child→grandchild at the same time both succeed, 50 times", async () => {
    for (let i = 0; i < 50; i++) {
      const [parent, child, grandchild] = await Promise.all(
        ["Parent", "Child", "Grandchild"].map((name) => createGroup(t, c, `${name} ${i}`)),
      );
      if (parent === undefined || child === undefined || grandchild === undefined) throw new Error("seed failed");
      const results = await Promise.all([
        addMembers(parent.id, [{ value: child.id }]),
        addMembers(child.id, [{ value: grandchild.id }]),
      ]);
      expect(results.map((r) => r.statusCode)).toEqual([200, 200]);
    }
  });

  it("A→B and B→A at the same time: exactly one commits, the other is refused as a cycle, 50 times", async () => {
    for (let i = 0; i < 50; i++) {
      const [a, b] = await Promise.all(["A", "B"].map((name) => createGroup(t, c, `Pair ${name} ${i}`)));
      if (a === undefined || b === undefined) throw new Error("seed failed");
      const results = await Promise.all([addMembers(a.id, [{ value: b.id }]), addMembers(b.id, [{ value: a.id }])]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
      expect(results.filter(refusedForACycle)).toHaveLength(1);
    }
    expect(await findCycle(c.organizationId)).toBeUndefined();
  });

  it("deleting a group while others add it as a member: 2xx or a 4xx naming the missing member, never a 5xx", async () => {
    for (let i = 0; i < 20; i++) {
      const [parent, other, victim] = await Promise.all(
        ["Keeper", "Other", "Victim"].map((name) => createGroup(t, c, `${name} ${i}`)),
      );
      if (parent === undefined || other === undefined || victim === undefined) throw new Error("seed failed");
      await addMembers(other.id, [{ value: victim.id }]);
      const results = await Promise.all([
        addMembers(parent.id, [{ value: victim.id }]),
        scim(t, c, "DELETE", `/Groups/${victim.id}`),
        addMembers(victim.id, [{ value: parent.id }]),
        addMembers(other.id, [{ value: parent.id }]),
      ]);
      for (const r of results) {
        expect([200, 204, 400, 404], r.body).toContain(r.statusCode);
        if (r.statusCode === 400) expect(r.body).toMatch(/cycle|itself|deleted|does not exist/);
      }
    }
    expect(await findCycle(c.organizationId)).toBeUndefined();
  });

  it("a user-member PATCH (Entra and Okta forms) never takes the nesting lock; a nesting PATCH takes it once", async () => {
    const spied = await createTestApp({ database: t.database, queries: true });
    const logged = spied.queries;
    try {
      const group = await createGroup(spied, c, "Spied");
      const child = await createGroup(spied, c, "Spied child");
      const user = await insertIdentity(t.db, c.organizationId, "spied-user");
      const nestingLocks = async (operations: unknown[]) => {
        logged.queries.length = 0;
        expect((await patchGroup(spied, c, group.id, operations)).statusCode).toBe(200);
        return logged.queries.filter((q) => /from organizations/.test(q.sql)).length;
      };
      expect(await nestingLocks([{ op: "Add", path: "members", value: [{ value: user, $ref: null }] }])).toBe(0);
      expect(await nestingLocks([{ op: "remove", path: `members[value eq "${user}"]` }])).toBe(0);
      expect(await nestingLocks([{ op: "add", path: "members", value: [{ value: child.id }] }])).toBe(1);
    } finally {
      await spied.close();
    }
  });

  it("deleting a group and deleting a user of it and of its parent at the same time: never a 5xx, 30 times", async () => {
    for (let i = 0; i < 30; i++) {
      const user = await insertIdentity(t.db, c.organizationId, `shared-${i}`);
      // Created first, the parent has the lower id: the two deletions lock the same rows in opposite order unless
      // both lock group rows by id.
      const parent = await createGroup(t, c, `Family parent ${i}`, { members: [{ value: user }] });
      const child = await createGroup(t, c, `Family child ${i}`, { members: [{ value: user }] });
      await addMembers(parent.id, [{ value: child.id }]);
      const results = await Promise.all([
        scim(t, c, "DELETE", `/Groups/${child.id}`),
        scim(t, c, "DELETE", `/Users/${user}`),
        addMembers(parent.id, [{ value: user }]),
      ]);
      for (const r of results) expect([200, 204, 400, 404], r.body).toContain(r.statusCode);
    }
  });
});
