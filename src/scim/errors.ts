import { GroupError } from "../directory/groups/errors.js";
import { ExtensionConflictError, IdentityConflictError } from "../directory/identities/errors.js";
import { MappingError } from "../directory/mapping/errors.js";

/** RFC 7644 §3.12 scimType values used by Roster (spec section 7). */
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
 * The domain's refusals as SCIM errors (spec 7), in one place: the SCIM scope's error handler asks here first.
 * Identity conflicts are 409 uniqueness; a failed data mapping is a 500 (the operator's script, not the request).
 */
export function scimErrorOf(e: unknown): ScimError | undefined {
  if (e instanceof ScimError) return e;
  if (e instanceof IdentityConflictError || e instanceof ExtensionConflictError) {
    return new ScimError(409, "uniqueness", e.message);
  }
  if (e instanceof MappingError) return new ScimError(500, undefined, `data mapping failed: ${e.message}`);
  if (e instanceof GroupError) {
    if (e.reason === "externalIdTaken") return new ScimError(409, "uniqueness", e.message);
    return badRequest("invalidValue", `members: ${e.message}`);
  }
  return undefined;
}
