import type { Db } from "../../storage/database.js";
import type { DirectoryEvent, EventClient, EventSink } from "../events.js";
import { transactionWithEvents } from "../events-repo.js";
import type { SearchSpec } from "../search/types.js";
import type { ScimClient } from "../scim-clients/types.js";
import { indexExtensions } from "./extension-index-repo.js";
import { memberCounts } from "./member-counts-repo.js";
import { memberChunks } from "./member-stream-repo.js";
import {
  addGroups,
  addUsers,
  classifyMembers,
  lockNesting,
  membersOf,
  removeGroups,
  removeUsers,
  wouldCycle,
} from "./membership-repo.js";
import { applyMembership, type MembershipEffect, NestingLockBusy } from "./memberships.js";
import {
  deleteGroup,
  findGroup,
  type GroupTransaction,
  insertGroup,
  lockGroup,
  lockGroupAndParents,
  touchParentsOf,
  updateGroup,
} from "./repo.js";
import { searchGroups } from "./repo-search.js";
import type { Group, GroupExtensions, GroupPage, Member, MembershipChange } from "./types.js";

/**
 * One change of one organization's groups, bound to its transaction: the service states what to do, the unit
 * knows where and how it is written. Its events are written in the same transaction and announced once committed.
 */
export interface GroupUnit {
  lock(id: string): Promise<Group | undefined>;
  /** The group and the groups containing it, locked together in id order (a deletion). */
  lockWithParents(id: string): Promise<Group | undefined>;
  insert(row: {
    id: string;
    displayName: string;
    externalId: string | null;
    extensions?: GroupExtensions | null;
    now: Date;
  }): Promise<Group>;
  update(
    id: string,
    row: { displayName: string; externalId: string | null; extensions: GroupExtensions | null; now: Date },
  ): Promise<Group>;
  delete(id: string): Promise<void>;
  /** The groups containing `id`, marked modified at `now`. */
  touchParentsOf(id: string, now: Date): Promise<Group[]>;
  indexExtensions(client: ScimClient, group: Group, before: Group | undefined): Promise<void>;
  applyMembership(groupId: string, changes: readonly MembershipChange[]): Promise<MembershipEffect>;
  record(client: EventClient, events: readonly DirectoryEvent[]): Promise<void>;
}

/**
 * How a unit takes the organization's nesting lock (docs/decisions.md "Group membership lock order"):
 * - `asNeeded`: only if a membership change adds a group member, and only if it is free then; when it is busy, the
 *   unit is rolled back and run once more with the lock taken first, so no transaction waits for the nesting lock
 *   while it holds a group row;
 * - `first`: before anything else (a deletion, which locks several group rows).
 */
export type NestingOrder = "asNeeded" | "first";

/** The storage of groups: reads on the pool, and units of work that own their transaction. */
export class GroupStore {
  constructor(
    private readonly db: Db,
    private readonly events: EventSink,
  ) {}

  find(orgId: string, id: string): Promise<Group | undefined> {
    return findGroup(this.db, orgId, id);
  }

  search(orgId: string, spec: SearchSpec, page: GroupPage) {
    return searchGroups(this.db, orgId, spec, page);
  }

  memberCounts(orgId: string, groupIds: readonly string[]): Promise<Map<string, number>> {
    return memberCounts(this.db, orgId, groupIds);
  }

  members(orgId: string, groupIds: readonly string[]): Promise<Map<string, Member[]>> {
    return membersOf(this.db, orgId, groupIds);
  }

  memberChunks(orgId: string, groupId: string, size: number): AsyncGenerator<Member[], void, undefined> {
    return memberChunks(this.db, orgId, groupId, size);
  }

  /** Runs `work` as one unit of work (one transaction) on the organization's groups. */
  async write<T>(orgId: string, nesting: NestingOrder, work: (unit: GroupUnit) => Promise<T>): Promise<T> {
    if (nesting === "asNeeded") {
      try {
        return await this.#run(orgId, "try", work);
      } catch (e) {
        if (!(e instanceof NestingLockBusy)) throw e;
      }
    }
    return this.#run(orgId, "held", work);
  }

  #run<T>(orgId: string, nesting: "try" | "held", work: (unit: GroupUnit) => Promise<T>): Promise<T> {
    return transactionWithEvents(this.db, this.events, async (trx, record) => {
      if (nesting === "held") await lockNesting(trx, orgId);
      return work(unitOf(trx, orgId, nesting, record));
    });
  }
}

function unitOf(trx: GroupTransaction, orgId: string, nesting: "try" | "held", record: GroupUnit["record"]): GroupUnit {
  return {
    lock: (id) => lockGroup(trx, orgId, id),
    lockWithParents: (id) => lockGroupAndParents(trx, orgId, id),
    insert: (row) => insertGroup(trx, orgId, row),
    update: (id, row) => updateGroup(trx, orgId, id, row),
    delete: async (id) => {
      await deleteGroup(trx, orgId, id);
    },
    touchParentsOf: (id, now) => touchParentsOf(trx, orgId, id, now),
    indexExtensions: (client, group, before) => indexExtensions(trx, client, group, before),
    applyMembership: (groupId, changes) =>
      applyMembership(
        {
          classify: (refs) => classifyMembers(trx, orgId, refs),
          // With the nesting lock held since the start, there is nothing to try.
          tryLockNesting: async () => nesting === "held" || (await lockNesting(trx, orgId, "try")),
          wouldCycle: (ids) => wouldCycle(trx, orgId, groupId, ids),
          addUsers: (ids) => addUsers(trx, orgId, groupId, ids),
          removeUsers: (ids, mode) => removeUsers(trx, orgId, groupId, ids, mode),
          addGroups: (ids) => addGroups(trx, orgId, groupId, ids),
          removeGroups: (ids, mode) => removeGroups(trx, orgId, groupId, ids, mode),
        },
        groupId,
        changes,
      ),
    record,
  };
}
