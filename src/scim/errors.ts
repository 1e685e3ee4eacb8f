import { GroupError } from "../directory/groups/errors.js";
import { ExtensionConflictError, IdentityConflictError } from "../directory/identities/errors.js";
import { InvalidMappingError, MappingError } from "../directory/mapping/errors.js";
import { VersionMismatchError } from "../directory/preconditions.js";
import { OrganizationNotFoundError } from "../directory/organizations/errors.js";
import { ClientGoneError, ClientIdTakenError, ExtensionValuesCollideError } from "../directory/scim-clients/errors.js";
import { UnsupportedFilterError } from "../directory/search/types.js";

/** RFC 7644 §3.12 scimType values used by Roster. */
export type ScimType =
  | "invalidSyntax"
  | "invalidValue"
  | "invalidFilter"
  | "invalidPath"
  | "noTarget"
  | "tooMany"
  | "uniqueness"
  | "mutability"
  | "invalidCursor"
  | "expiredCursor";

/** The one error type of the SCIM protocol; the SCIM scope's error handler renders it. */
export class ScimError extends Error {
  readonly status: number;
  readonly scimType: ScimType | undefined;
  readonly detail: string | undefined;

  constructor(status: number, scimType: ScimType | undefined, detail?: string) {
    super(detail ?? `SCIM error ${status}`);
    this.name = "ScimError";
    this.status = status;
    this.scimType = scimType;
    this.detail = detail;
  }
}

export const badRequest = (scimType: ScimType | undefined, detail: string): ScimError =>
  new ScimError(400, scimType, detail);

/**
 * The domain's refusals as SCIM errors (RFC 7644 §3.12): every error class of `directory/`, in this one place, so a
 * route lets them through rather than catching them; undefined for anything else. Conflicts are 409 uniqueness, a
 * failed If-Match 412, a group's bad member 400 invalidValue, a filter (sort) the store cannot answer 400
 * invalidFilter (invalidValue), a failed data mapping a 500, and a write that raced the deletion of its own client
 * answers as for a client that does not exist. The refusals of the admin API's own operations (a mapping or an
 * extension declaration refused, a client id taken, an organization missing) cannot reach SCIM; they are mapped as
 * what they would be to a SCIM request.
 */
export function scimErrorOf(e: unknown): ScimError | undefined {
  if (e instanceof ScimError) return e;
  if (e instanceof IdentityConflictError || e instanceof ExtensionConflictError) {
    return new ScimError(409, "uniqueness", e.message);
  }
  if (e instanceof GroupError) {
    return e.reason === "externalIdTaken" || e.reason === "extensionValueTaken"
      ? new ScimError(409, "uniqueness", e.message)
      : badRequest("invalidValue", `members: ${e.message}`);
  }
  // RFC 7644 §3.14: an If-Match that names no current version; no scimType fits (§3.12 defines none for 412).
  if (e instanceof VersionMismatchError) {
    return new ScimError(412, undefined, `the resource has changed: its version is W/"${e.current}"`);
  }
  if (e instanceof UnsupportedFilterError) {
    return badRequest(e.part === "sort" ? "invalidValue" : "invalidFilter", e.message);
  }
  if (e instanceof MappingError) return new ScimError(500, undefined, `data mapping failed: ${e.message}`);
  if (e instanceof ClientGoneError || e instanceof OrganizationNotFoundError) {
    return new ScimError(404, undefined, "SCIM client not found");
  }
  if (e instanceof ExtensionValuesCollideError || e instanceof ClientIdTakenError) {
    return new ScimError(409, "uniqueness", e.message);
  }
  if (e instanceof InvalidMappingError) {
    return badRequest("invalidValue", e.message);
  }
  return undefined;
}
