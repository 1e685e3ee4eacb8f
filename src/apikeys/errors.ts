/**
 * Why an API key operation was refused. The admin API maps each reason to its status and message
 * (admin/domain-errors.ts); the domain knows no protocol.
 */
export type ApiKeyErrorReason =
  /** No key of that kind has this id. */
  | "keyNotFound"
  /** The organization a key is created for does not exist (or was deleted meanwhile). */
  | "organizationNotFound"
  /** A revoked key can neither change nor rotate. */
  | "keyRevoked"
  /** A key's metadata would exceed MAX_METADATA_BYTES once changed. */
  | "metadataTooLarge"
  /** Every item of an import batch failed, each because its key exists already. */
  | "batchAllExist"
  /** Every item of an import batch failed, at least one for another reason. */
  | "batchAllFailed";

/** The message is safe to show: it names ids and fields, never a secret or a raw key. */
export class ApiKeyError extends Error {
  constructor(
    readonly reason: ApiKeyErrorReason,
    message: string,
  ) {
    super(message);
    this.name = "ApiKeyError";
  }
}

export const keyNotFound = (kind: string, keyId: string): ApiKeyError =>
  new ApiKeyError("keyNotFound", `${kind} API key ${keyId} does not exist`);

export const organizationNotFound = (organizationId: string | null): ApiKeyError =>
  new ApiKeyError("organizationNotFound", `organization ${organizationId} does not exist`);
