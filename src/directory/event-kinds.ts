/**
 * Every kind of change an event (feed entry, webhook) announces: the directory's, its connections', and the API keys'
 * that deprovisioning or the admin API changes. A module of its own, with no imports, so
 * that the admin portal's bundle shares the list instead of copying it.
 */
export const DIRECTORY_EVENT_KINDS = [
  "user.created",
  "user.updated",
  "user.deleted",
  "group.created",
  "group.updated",
  "group.deleted",
  "group.user_added",
  "group.user_removed",
  "connection.created",
  "connection.activated",
  "connection.deleted",
  "api_key.suspended",
  "api_key.revoked",
  "connection.deprovisioning_held",
] as const;

export type DirectoryEventKind = (typeof DIRECTORY_EVENT_KINDS)[number];
