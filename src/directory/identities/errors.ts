/**
 * An identifier (userName or email) is taken. `scope` says where: this organization (409
 * uniqueness, or auto-link) or another one (409, detail "identity already exists in another scope").
 */
/** A value of an extension attribute declared `uniqueness: "server"` is taken in the organization. */
export class ExtensionConflictError extends Error {
  constructor() {
    super("another user of the organization holds this value of a unique extension attribute");
    this.name = "ExtensionConflictError";
  }
}

export class IdentityConflictError extends Error {
  readonly scope: "organization" | "another";
  constructor(scope: "organization" | "another") {
    super(
      scope === "organization"
        ? "a user with this userName or email already exists"
        : "identity already exists in another scope",
    );
    this.name = "IdentityConflictError";
    this.scope = scope;
  }
}
