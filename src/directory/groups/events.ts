import { type DirectoryEvent, type DirectoryEventKind, groupEventData, membershipEventData } from "../events.js";
import { visibleTo } from "../identities/visible.js";
import type { ScimClient } from "../scim-clients/types.js";
import type { MembershipEffect } from "./memberships.js";
import type { Group, GroupExtensions } from "./types.js";

const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";

type RawGroup = Pick<Group, "id" | "externalId" | "displayName"> & { readonly extensions?: GroupExtensions | null };

/**
 * `raw` of group events: the group as stored, without members (a group may have 100 000 of them), with the
 * extension objects the client sees (another client's declared extensions left out, as in its SCIM responses).
 */
export const groupRaw = (group: RawGroup, client?: ScimClient): Record<string, unknown> => {
  const raw: Record<string, unknown> = {
    schemas: [GROUP_SCHEMA],
    id: group.id,
    ...(group.externalId === null ? {} : { externalId: group.externalId }),
    displayName: group.displayName,
  };
  if (group.extensions === null || group.extensions === undefined) return raw;
  const seen = client === undefined ? group.extensions : visibleTo(client, group.extensions);
  const urns = Object.keys(seen);
  return urns.length === 0 ? raw : { ...raw, schemas: [GROUP_SCHEMA, ...urns], ...seen };
};

export const groupEvent = (kind: DirectoryEventKind, group: Group, client?: ScimClient): DirectoryEvent => ({
  kind,
  resourceId: group.id,
  data: groupEventData(groupRaw(group, client)),
});

/**
 * One group.user_removed / group.user_added per user (the user's data plus the group); a
 * changed nested-group membership is a group.updated of the parent, emitted by the caller.
 */
export function membershipEvents(group: Group, effect: MembershipEffect, client?: ScimClient): DirectoryEvent[] {
  const raw = groupRaw(group, client);
  const event = (kind: DirectoryEventKind, user: { id: string; scim: Record<string, unknown> }): DirectoryEvent => ({
    kind,
    resourceId: group.id,
    data: membershipEventData({ ...user.scim, id: user.id }, raw),
  });
  return [
    ...[...effect.removedUsers.values()].map((u) => event("group.user_removed", u)),
    ...[...effect.addedUsers.values()].map((u) => event("group.user_added", u)),
  ];
}
