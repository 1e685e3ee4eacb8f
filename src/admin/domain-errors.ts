import { ApiKeyError, type ApiKeyErrorReason } from "../apikeys/errors.js";
import { GroupError } from "../directory/groups/errors.js";
import { ExtensionConflictError, IdentityConflictError } from "../directory/identities/errors.js";
import { InvalidMappingError, MappingError } from "../directory/mapping/errors.js";
import { VersionMismatchError } from "../directory/preconditions.js";
import { OrganizationNotFoundError } from "../directory/organizations/errors.js";
import { ClientGoneError, ClientIdTakenError, ExtensionValuesCollideError } from "../directory/scim-clients/errors.js";
import { UnsupportedFilterError } from "../directory/search/types.js";
import { AdminError, type AdminStatus } from "./errors.js";

/**
 * The domain's refusals the admin API renders, every class of `directory/` and `apikeys/`: this file is the one
 * place they become admin errors, so a route lets them through rather than catching them.
 */
export type DomainError =
  | ApiKeyError
  | ClientGoneError
  | ClientIdTakenError
  | ExtensionConflictError
  | ExtensionValuesCollideError
  | GroupError
  | IdentityConflictError
  | InvalidMappingError
  | MappingError
  | OrganizationNotFoundError
  | UnsupportedFilterError
  | VersionMismatchError;

const API_KEY_STATUS: Record<ApiKeyErrorReason, AdminStatus> = {
  keyNotFound: "NOT_FOUND",
  organizationNotFound: "NOT_FOUND",
  keyRevoked: "FAILED_PRECONDITION",
  metadataTooLarge: "INVALID_ARGUMENT",
  batchAllExist: "ALREADY_EXISTS",
  batchAllFailed: "INVALID_ARGUMENT",
};

const DOMAIN_ERRORS = [
  ApiKeyError,
  ClientGoneError,
  ClientIdTakenError,
  ExtensionConflictError,
  ExtensionValuesCollideError,
  GroupError,
  IdentityConflictError,
  InvalidMappingError,
  MappingError,
  OrganizationNotFoundError,
  UnsupportedFilterError,
  VersionMismatchError,
] as const;

export const isDomainError = (e: unknown): e is DomainError => DOMAIN_ERRORS.some((kind) => e instanceof kind);

/**
 * A domain error as the admin API's error: the status name by class (and reason), the domain's message (it names
 * ids and fields, never a secret). `details` travel in the error body (a batch's per-item results).
 */
export function toAdminError(e: DomainError, details: readonly unknown[] = []): AdminError {
  if (e instanceof ApiKeyError) return new AdminError(API_KEY_STATUS[e.reason], e.message, details);
  if (e instanceof ExtensionValuesCollideError) {
    // The holders travel as data too, so a script can fix them without parsing the message.
    const holders = e.collisions.map((c) => ({ attribute: c.attribute, resource: e.resource, ids: c.ids }));
    return new AdminError("ALREADY_EXISTS", e.message, [...details, ...holders]);
  }
  if (e instanceof IdentityConflictError || e instanceof ExtensionConflictError || e instanceof ClientIdTakenError) {
    return new AdminError("ALREADY_EXISTS", e.message, details);
  }
  if (e instanceof GroupError) {
    return e.reason === "externalIdTaken" || e.reason === "extensionValueTaken"
      ? new AdminError("ALREADY_EXISTS", e.message, details)
      : new AdminError("INVALID_ARGUMENT", `members: ${e.message}`, details);
  }
  if (e instanceof VersionMismatchError) return new AdminError("FAILED_PRECONDITION", e.message, details);
  if (e instanceof ClientGoneError || e instanceof OrganizationNotFoundError) {
    return new AdminError("NOT_FOUND", e.message, details);
  }
  // A filter the parser accepts but the store cannot answer is an invalid argument too.
  if (e instanceof UnsupportedFilterError)
    return new AdminError("INVALID_ARGUMENT", `${e.part}: ${e.message}`, details);
  // An operator's mapping that fails (:testMapping) is the request's fault here, where SCIM answers 500.
  if (e instanceof MappingError)
    return new AdminError("INVALID_ARGUMENT", `data mapping failed: ${e.message}`, details);
  return new AdminError("INVALID_ARGUMENT", e.message, details);
}

/** The admin error of `e` when it is one of the domain's refusals; undefined for anything else. */
export const adminErrorOf = (e: unknown): AdminError | undefined => (isDomainError(e) ? toAdminError(e) : undefined);
