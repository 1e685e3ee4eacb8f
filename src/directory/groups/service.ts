import type { GroupTransaction } from "./repo.js";
import type { Clock } from "../../platform/clock.js";
import { uuidv7 } from "../../platform/ids.js";
import type { Db } from "../../storage/database.js";
import type { EventSink } from "../events.js";
import { type RecordEvents, transactionWithEvents } from "../events-repo.js";
import { checkVersion, type ExpectedVersions } from "../preconditions.js";
import type { ScimClient } from "../scim-clients/types.js";
import { groupEvent, membershipEvents } from "./events.js";
import { indexExtensions, sameExtensions } from "./extension-index-repo.js";
import { lockNesting, membersJson } from "./membership-repo.js";
import { applyMembership, type NestingLock, NestingLockBusy } from "./memberships.js";
import {
  deleteGroup,
  findGroup,
  insertGroup,
  lockGroup,
  lockGroupAndParents,
  touchParentsOf,
  updateGroup,
} from "./repo.js";
import type { SearchSpec } from "../search/types.js";
import { searchGroups } from "./repo-search.js";
import type { Group, GroupInput, GroupPage, GroupPatch, MemberFields } from "./types.js";
import { memberCounts } from "./member-counts-repo.js";
import { memberChunks } from "./member-stream-repo.js";

/**
 * Groups and memberships. Every method takes the organization first and touches nothing
 * outside it; every change runs in one transaction that also records its events, and a
 * request that changes nothing writes nothing and records nothing (Okta re-sends unchanged names).
 */
export class GroupService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #events: EventSink;

  constructor(db: Db, clock: Clock, events: EventSink) {
    this.#db = db;
    this.#clock = clock;
    this.#events = events;
  }

  get(orgId: string, id: string): Promise<Group | undefined> {
    return findGroup(this.#db, orgId, id);
  }

  /** One list page; a filter the store cannot answer throws UnsupportedFilterError. */
  list(orgId: string, spec: SearchSpec, page: GroupPage): Promise<{ rows: Group[]; total?: number }> {
    return searchGroups(this.#db, orgId, spec, page);
  }

  /** How many direct members (users and groups) each group of `groupIds` has, for the admin directory browser. */
  memberCounts(orgId: string, groupIds: readonly string[]): Promise<Map<string, number>> {
    return memberCounts(this.#db, orgId, groupIds);
  }

  /** Member lists as JSON text, one statement for all the given groups (see membersJson). */
  membersJson(orgId: string, groupIds: readonly string[], fields: MemberFields, baseUrl: string) {
    return membersJson(this.#db, orgId, groupIds, fields, baseUrl);
  }

  /** One group's members as JSON texts, `size` at a time (see memberChunks): memory holds one chunk. */
  memberChunks(orgId: string, groupId: string, fields: MemberFields, baseUrl: string, size: number) {
    return memberChunks(this.#db, orgId, groupId, fields, baseUrl, size);
  }

  async create(orgId: string, client: ScimClient, input: GroupInput): Promise<Group> {
    return this.#nesting(orgId, async (trx, nesting, record) => {
      const now = this.#clock.now();
      const group = await insertGroup(trx, orgId, {
        id: uuidv7(now.getTime()),
        displayName: input.displayName,
        externalId: input.externalId,
        extensions: input.extensions ?? null,
        now,
      });
      await indexExtensions(trx, client, group, undefined);
      const effect = await applyMembership(trx, orgId, group.id, [{ kind: "add", members: input.members }], nesting);
      await record(client, [groupEvent("group.created", group, client), ...membershipEvents(group, effect, client)]);
      return group;
    });
  }

  /**
   * RFC 7644 §3.5.1: PUT replaces displayName, externalId, the extensions and the whole member list; `input` is
   * computed from the locked current group (another client's extension objects stay).
   */
  replace(
    orgId: string,
    client: ScimClient,
    id: string,
    input: (current: Group) => GroupInput,
    expected?: ExpectedVersions,
  ): Promise<Group | undefined> {
    return this.patch(
      orgId,
      client,
      id,
      (current) => {
        const replaced = input(current);
        return {
          displayName: replaced.displayName,
          externalId: replaced.externalId,
          membership: [{ kind: "replace", members: replaced.members }],
          extensions: replaced.extensions ?? null,
        };
      },
      expected,
    );
  }

  /**
   * Reads and locks the group, asks `plan` what to change (the SCIM PATCH engine runs there, on the locked state),
   * then applies it. `plan` may throw to refuse the request; nothing is written then. With `expected` (If-Match),
   * the locked row's version must be one of them, else VersionMismatchError.
   */
  async patch(
    orgId: string,
    client: ScimClient,
    id: string,
    plan: (current: Group) => GroupPatch,
    expected?: ExpectedVersions,
  ): Promise<Group | undefined> {
    return this.#nesting(orgId, async (trx, nesting, record) => {
      const current = await lockGroup(trx, orgId, id);
      if (current === undefined) return undefined;
      checkVersion(expected, current.version);
      const change = plan(current);
      const effect = await applyMembership(trx, orgId, id, change.membership, nesting);
      const renamed = change.displayName !== current.displayName || change.externalId !== current.externalId;
      const extended = change.extensions !== undefined && !sameExtensions(change.extensions, current.extensions);
      if (!renamed && !extended && !effect.changed) return current;

      const extensions = extended ? (change.extensions ?? null) : current.extensions;
      const group = await updateGroup(trx, orgId, id, { ...change, extensions, now: this.#clock.now() });
      if (extended) await indexExtensions(trx, client, group, current);
      const updated = renamed || extended || effect.groupsChanged ? [groupEvent("group.updated", group, client)] : [];
      await record(client, [...updated, ...membershipEvents(group, effect, client)]);
      return group;
    });
  }

  /**
   * Deletes the group; its memberships go with it, and the groups that contained it are updated. It locks several group
   * rows, so it takes the nesting lock first, then the group and its parents in id order (docs/decisions.md "Group
   * membership lock order"); the delete itself then strengthens its own row's lock.
   */
  async delete(orgId: string, client: ScimClient, id: string, expected?: ExpectedVersions): Promise<boolean> {
    return transactionWithEvents(this.#db, this.#events, async (trx, record) => {
      await lockNesting(trx, orgId);
      const current = await lockGroupAndParents(trx, orgId, id);
      if (current === undefined) return false;
      checkVersion(expected, current.version);
      const parents = await touchParentsOf(trx, orgId, id, this.#clock.now());
      await deleteGroup(trx, orgId, id);
      await record(client, [
        groupEvent("group.deleted", current, client),
        ...parents.map((p) => groupEvent("group.updated", p, client)),
      ]);
      return true;
    });
  }

  /**
   * Runs `work` in a transaction that takes the nesting lock only if it is free when needed (`try`); when it is busy,
   * rolls back and runs `work` once more with the nesting lock taken before anything else, so no transaction ever
   * waits for the nesting lock while holding a group row (docs/decisions.md "Group membership lock order").
   */
  async #nesting<T>(
    orgId: string,
    work: (trx: GroupTransaction, nesting: NestingLock, record: RecordEvents) => Promise<T>,
  ): Promise<T> {
    try {
      return await transactionWithEvents(this.#db, this.#events, (trx, record) => work(trx, "try", record));
    } catch (e) {
      if (!(e instanceof NestingLockBusy)) throw e;
    }
    return transactionWithEvents(this.#db, this.#events, async (trx, record) => {
      await lockNesting(trx, orgId);
      return work(trx, "held", record);
    });
  }
}
