import { isForeignKeyViolation } from "../../storage/errors.js";

/** Why a SCIM client was not created; the admin API maps each reason to its status and message. */
export type ScimClientRefusal = "client_exists" | "organization_missing";

/**
 * The constraints a directory write breaks when its SCIM client (or the client's organization) was deleted — by
 * another instance, whose deletion this one's client cache has not seen yet — between authenticating the request
 * and writing: the event rows reference the client, the resources their organization.
 */
const CLIENT_GONE_CONSTRAINTS: readonly string[] = [
  "webhook_outbox_client_fkey",
  "directory_events_client_fkey",
  "identities_organization_fkey",
  "directory_groups_organization_fkey",
];

/** A write that raced the deletion of its client: the protocol answers as for a client that does not exist. */
export function isClientGone(e: unknown): boolean {
  return CLIENT_GONE_CONSTRAINTS.some((c) => isForeignKeyViolation(e, c));
}

/** A value of a newly unique extension attribute and the resources (ids) that already hold it. */
export interface CollidingValue {
  /** `<schema URN>:<attribute>`, as declared. */
  readonly attribute: string;
  readonly ids: readonly string[];
}

/**
 * A declaration that makes an attribute unique while existing users (or groups) of the organization already repeat
 * one of its values: refused, nothing changed (docs/scim-extensions.md "Uniqueness from the first request").
 */
export class ExtensionValuesCollideError extends Error {
  readonly resource: "User" | "Group";
  readonly collisions: readonly CollidingValue[];
  constructor(resource: "User" | "Group", collisions: readonly CollidingValue[]) {
    const holders = resource === "User" ? "users" : "groups";
    const named = collisions.map((c) => `${c.attribute} (${holders} ${c.ids.join(", ")})`).join("; ");
    super(
      collisions.length === 0
        ? `${holders} written meanwhile repeat a value of a newly unique extension attribute; retry`
        : `existing ${holders} of the organization already repeat values of a unique extension attribute: ${named}`,
    );
    this.name = "ExtensionValuesCollideError";
    this.resource = resource;
    this.collisions = collisions;
  }
}
