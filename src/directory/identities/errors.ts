/**
 * Issue 3 point 4: an identifier (userName or email) is taken. `scope` says where: this organization (409
 * uniqueness, or auto-link) or another one (409, detail "identity already exists in another scope").
 */
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
