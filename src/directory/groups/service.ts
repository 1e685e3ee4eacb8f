import type { Clock } from "../../platform/clock.js";
import { uuidv7 } from "../../platform/ids.js";
import { checkVersion, type ExpectedVersions } from "../preconditions.js";
import type { ScimClient } from "../scim-clients/types.js";
import type { SearchSpec } from "../search/types.js";
import { groupEvent, membershipEvents } from "./events.js";
import { sameExtensions } from "./extension-index-repo.js";
import type { GroupStore } from "./repo-unit.js";
import type { Group, GroupInput, GroupList, GroupPage, GroupPatch, Member } from "./types.js";

/**
 * Groups and memberships. Every method takes the organization first and touches nothing
 * outside it; every change runs in one transaction that also records its events, and a
 * request that changes nothing writes nothing and records nothing (Okta re-sends unchanged names).
 */
export class GroupService {
  constructor(
    private readonly store: GroupStore,
    private readonly clock: Clock,
  ) {}

  get(orgId: string, id: string): Promise<Group | undefined> {
    return this.store.find(orgId, id);
  }

  /** One list page; a filter the store cannot answer throws UnsupportedFilterError. */
  list(orgId: string, spec: SearchSpec, page: GroupPage): Promise<GroupList> {
    return this.store.search(orgId, spec, page);
  }

  /** How many direct members (users and groups) each group of `groupIds` has, for the admin directory browser. */
  memberCounts(orgId: string, groupIds: readonly string[]): Promise<Map<string, number>> {
    return this.store.memberCounts(orgId, groupIds);
  }

  /** The members of each given group in id order, one statement for all (a list page's groups). */
  members(orgId: string, groupIds: readonly string[]): Promise<Map<string, Member[]>> {
    return this.store.members(orgId, groupIds);
  }

  /** One group's members in id order, `size` at a time, each chunk read when asked for: memory holds one chunk. */
  memberChunks(orgId: string, groupId: string, size: number): AsyncGenerator<Member[], void, undefined> {
    return this.store.memberChunks(orgId, groupId, size);
  }

  async create(orgId: string, client: ScimClient, input: GroupInput): Promise<Group> {
    return this.store.write(orgId, "asNeeded", async (unit) => {
      const now = this.clock.now();
      const group = await unit.insert({
        id: uuidv7(now.getTime()),
        displayName: input.displayName,
        externalId: input.externalId,
        extensions: input.extensions ?? null,
        now,
      });
      await unit.indexExtensions(client, group, undefined);
      const effect = await unit.applyMembership(group.id, [{ kind: "add", members: input.members }]);
      await unit.record(client, [
        groupEvent("group.created", group, client),
        ...membershipEvents(group, effect, client),
      ]);
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
    return this.store.write(orgId, "asNeeded", async (unit) => {
      const current = await unit.lock(id);
      if (current === undefined) return undefined;
      checkVersion(expected, current.version);
      const change = plan(current);
      const effect = await unit.applyMembership(id, change.membership);
      const renamed = change.displayName !== current.displayName || change.externalId !== current.externalId;
      const extended = change.extensions !== undefined && !sameExtensions(change.extensions, current.extensions);
      if (!renamed && !extended && !effect.changed) return current;

      const extensions = extended ? (change.extensions ?? null) : current.extensions;
      const group = await unit.update(id, { ...change, extensions, now: this.clock.now() });
      if (extended) await unit.indexExtensions(client, group, current);
      const updated = renamed || extended || effect.groupsChanged ? [groupEvent("group.updated", group, client)] : [];
      await unit.record(client, [...updated, ...membershipEvents(group, effect, client)]);
      return group;
    });
  }

  /**
   * Deletes the group; its memberships go with it, and the groups that contained it are updated. It locks several group
   * rows, so it takes the nesting lock first, then the group and its parents in id order (docs/decisions.md "Group
   * membership lock order"); the delete itself then strengthens its own row's lock.
   */
  async delete(orgId: string, client: ScimClient, id: string, expected?: ExpectedVersions): Promise<boolean> {
    return this.store.write(orgId, "first", async (unit) => {
      const current = await unit.lockWithParents(id);
      if (current === undefined) return false;
      checkVersion(expected, current.version);
      const parents = await unit.touchParentsOf(id, this.clock.now());
      await unit.delete(id);
      await unit.record(client, [
        groupEvent("group.deleted", current, client),
        ...parents.map((p) => groupEvent("group.updated", p, client)),
      ]);
      return true;
    });
  }
}
