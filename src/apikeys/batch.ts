import { ApiKeyError } from "./errors.js";
import type { ImportOutcome } from "./service.js";

/** The result of a batch item refused before it reached storage (invalid, or a repeat within the batch). */
export type ItemError = { readonly error: { readonly code: string; readonly message: string } };

/**
 * A batch succeeds when any item succeeded. When all failed it fails as a whole: `batchAllExist` when every
 * failure was ALREADY_EXISTS, else `batchAllFailed`; the per-item results still go back to the caller.
 */
export function batchFailure(outcomes: readonly ImportOutcome[]): ApiKeyError | undefined {
  const errors = outcomes.flatMap((o) => ("error" in o ? [o.error] : []));
  if (errors.length < outcomes.length) return undefined;
  return errors.every((e) => e.code === "ALREADY_EXISTS")
    ? new ApiKeyError("batchAllExist", `all ${errors.length} keys already exist`)
    : new ApiKeyError("batchAllFailed", `all ${errors.length} items failed; see details for each item`);
}
