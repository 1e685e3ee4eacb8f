import { ApiKeyError, type ApiKeyErrorReason } from "../apikeys/errors.js";
import { InvalidMappingError } from "../directory/mapping/errors.js";
import { ExtensionValuesCollideError } from "../directory/scim-clients/errors.js";
import { AdminError, type AdminStatus } from "./errors.js";

/** The domain's refusals the admin API renders; anything else is not a domain error. */
export type DomainError = ApiKeyError | InvalidMappingError | ExtensionValuesCollideError;

const API_KEY_STATUS: Record<ApiKeyErrorReason, AdminStatus> = {
  keyNotFound: "NOT_FOUND",
  organizationNotFound: "NOT_FOUND",
  keyRevoked: "FAILED_PRECONDITION",
  metadataTooLarge: "INVALID_ARGUMENT",
  batchAllExist: "ALREADY_EXISTS",
  batchAllFailed: "INVALID_ARGUMENT",
};

export const isDomainError = (e: unknown): e is DomainError =>
  e instanceof ApiKeyError || e instanceof InvalidMappingError || e instanceof ExtensionValuesCollideError;

/**
 * A domain error as the admin API's error: the status name by reason, the domain's message as it is (it names ids
 * and fields, never a secret). `details` travel in the error body (a batch's per-item results).
 */
export function toAdminError(e: DomainError, details: readonly unknown[] = []): AdminError {
  if (e instanceof ApiKeyError) return new AdminError(API_KEY_STATUS[e.reason], e.message, details);
  if (e instanceof ExtensionValuesCollideError) {
    // The holders travel as data too, so a script can fix them without parsing the message.
    const holders = e.collisions.map((c) => ({ attribute: c.attribute, resource: e.resource, ids: c.ids }));
    return new AdminError("ALREADY_EXISTS", e.message, [...details, ...holders]);
  }
  return new AdminError("INVALID_ARGUMENT", e.message, details);
}
