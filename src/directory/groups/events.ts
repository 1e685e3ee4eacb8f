import { type DirectoryEvent, type DirectoryEventKind, groupEventData, membershipEventData } from "../events.js";
import type { MembershipEffect } from "./memberships.js";
import type { Group } from "./types.js";

const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";

/** `raw` of group events: the group as stored, without members (a group may have 100 000 of them). */
export const groupRaw = (group: Pick<Group, "id" | "externalId" | "displayName">): Record<string, unknown> => ({
  schemas: [GROUP_SCHEMA],
  id: group.id,
  ...(group.externalId === null ? {} : { externalId: group.externalId }),
  displayName: group.displayName,
});

export const groupEvent = (kind: DirectoryEventKind, group: Group): DirectoryEvent => ({
  kind,
  resourceId: group.id,
  data: groupEventData(groupRaw(group)),
});

/**
 * DESIGN.md "Webhooks": one group.user_removed / group.user_added per user (the user's data plus the group); a
 * changed nested-group membership is a group.updated of the parent, emitted by the caller.
 */
export function membershipEvents(group: Group, effect: MembershipEffect): DirectoryEvent[] {
  const raw = groupRaw(group);
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
