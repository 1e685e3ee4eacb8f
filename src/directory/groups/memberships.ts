import { GroupError } from "./errors.js";
import type { MemberProblem, MemberUser } from "./membership-repo.js";
import type { MemberRef, MembershipChange } from "./types.js";

/**
 * The membership statements of one group inside the unit of work that changes it (repo-unit.ts binds them to its
 * transaction, organization and group): what the membership rules below need, and nothing of how it is stored.
 */
export interface MembershipWrites {
  classify(refs: readonly MemberRef[]): Promise<{ groups: string[]; problems: MemberProblem[] }>;
  /** Takes the organization's nesting lock if it is free (true at once when the unit holds it); false when busy. */
  tryLockNesting(): Promise<boolean>;
  wouldCycle(memberGroupIds: readonly string[]): Promise<boolean>;
  addUsers(ids: readonly string[]): Promise<MemberUser[]>;
  removeUsers(ids: readonly string[] | "all", mode?: "listed" | "keep"): Promise<MemberUser[]>;
  addGroups(ids: readonly string[]): Promise<string[]>;
  removeGroups(ids: readonly string[] | "all", mode?: "listed" | "keep"): Promise<string[]>;
}

/** The net effect of a request's membership changes: a member removed and re-added in one request is no change. */
export class MembershipEffect {
  readonly addedUsers = new Map<string, MemberUser>();
  readonly removedUsers = new Map<string, MemberUser>();
  readonly #addedGroups = new Set<string>();
  readonly #removedGroups = new Set<string>();

  get groupsChanged(): boolean {
    return this.#addedGroups.size > 0 || this.#removedGroups.size > 0;
  }

  get changed(): boolean {
    return this.groupsChanged || this.addedUsers.size > 0 || this.removedUsers.size > 0;
  }

  users(added: readonly MemberUser[], removed: readonly MemberUser[]): void {
    for (const user of removed) {
      if (!this.addedUsers.delete(user.id)) this.removedUsers.set(user.id, user);
    }
    for (const user of added) {
      if (!this.removedUsers.delete(user.id)) this.addedUsers.set(user.id, user);
    }
  }

  groups(added: readonly string[], removed: readonly string[]): void {
    for (const id of removed) if (!this.#addedGroups.delete(id)) this.#removedGroups.add(id);
    for (const id of added) if (!this.#removedGroups.delete(id)) this.#addedGroups.add(id);
  }
}

const describe = (p: MemberProblem): string =>
  p.kind === null
    ? `member ${p.value} does not exist in this organization`
    : `member ${p.value} is a ${p.kind}, not a ${p.type ?? "member"}`;

/**
 * The nesting lock was busy while the transaction held a group row: waiting would invert the lock order, so the
 * caller rolls back (nothing is written yet) and runs the request again with the nesting lock taken first.
 */
export class NestingLockBusy extends Error {
  constructor() {
    super("the organization's nesting lock is busy");
    this.name = "NestingLockBusy";
  }
}

/**
 * Applies membership changes in request order with set-based SQL: one classification statement for every member the
 * request names, then one statement per change and member kind, whatever the number of members.
 */
export async function applyMembership(
  writes: MembershipWrites,
  groupId: string,
  changes: readonly MembershipChange[],
): Promise<MembershipEffect> {
  const effect = new MembershipEffect();
  const named = changes.flatMap((c) => (c.kind === "add" || c.kind === "replace" ? c.members : []));
  const groupIds = new Set<string>();
  if (named.length > 0) {
    const { groups, problems } = await writes.classify(unique(named));
    const [problem] = problems;
    if (problem !== undefined) throw new GroupError("invalidMember", describe(problem));
    for (const id of groups) groupIds.add(id);
  }
  if (groupIds.has(groupId)) throw new GroupError("cycle", "a group cannot be a member of itself");
  // Only adding group members can close a cycle or wait on another group's row; removals need no nesting lock.
  if (groupIds.size > 0 && !(await writes.tryLockNesting())) throw new NestingLockBusy();

  const split = (members: readonly MemberRef[]) => ({
    users: members.filter((m) => !groupIds.has(m.value)).map((m) => m.value),
    groups: members.filter((m) => groupIds.has(m.value)).map((m) => m.value),
  });
  const nest = async (ids: readonly string[]): Promise<void> => {
    if (ids.length > 0 && (await writes.wouldCycle(ids))) {
      throw new GroupError("cycle", "adding these groups as members would create a membership cycle");
    }
  };

  for (const change of changes) {
    switch (change.kind) {
      case "add": {
        const { users, groups } = split(change.members);
        if (users.length > 0) effect.users(await writes.addUsers(users), []);
        if (groups.length > 0) {
          await nest(groups);
          effect.groups(await writes.addGroups(groups), []);
        }
        break;
      }
      case "remove":
        if (change.values.length === 0) break;
        effect.users([], await writes.removeUsers(change.values));
        effect.groups([], await writes.removeGroups(change.values));
        break;
      case "removeAll":
        effect.users([], await writes.removeUsers("all"));
        effect.groups([], await writes.removeGroups("all"));
        break;
      case "replace": {
        // RFC 7644 §3.5.2.3: the new list replaces the old one; the difference is computed in SQL.
        const { users, groups } = split(change.members);
        effect.users([], await writes.removeUsers(users, "keep"));
        effect.groups([], await writes.removeGroups(groups, "keep"));
        if (users.length > 0) effect.users(await writes.addUsers(users), []);
        if (groups.length > 0) {
          await nest(groups);
          effect.groups(await writes.addGroups(groups), []);
        }
        break;
      }
    }
  }
  return effect;
}

const unique = (refs: readonly MemberRef[]): MemberRef[] => {
  const byId = new Map<string, MemberRef>();
  for (const ref of refs) {
    const seen = byId.get(ref.value);
    if (seen === undefined || (seen.type === undefined && ref.type !== undefined)) byId.set(ref.value, ref);
  }
  return [...byId.values()];
};
