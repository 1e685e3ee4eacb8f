/** A SCIM client was created with a client id another client has. */
export class ClientIdTakenError extends Error {
  readonly clientId: string;
  constructor(clientId: string) {
    super(`client_id ${clientId} is taken`);
    this.name = "ClientIdTakenError";
    this.clientId = clientId;
  }
}

/**
 * A directory write raced the deletion of its SCIM client (or of the client's organization) — by another instance,
 * whose deletion this one's client cache has not seen yet — between authenticating the request and writing. The
 * repositories raise it (gone-repo.ts); a protocol answers as for a client that does not exist.
 */
export class ClientGoneError extends Error {
  constructor() {
    super("SCIM client not found");
    this.name = "ClientGoneError";
  }
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
