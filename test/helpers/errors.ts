import { ScimError } from "../../src/scim/errors.js";

/** The ScimError `run` throws; anything else it throws is rethrown, and not throwing fails with `otherwise`. */
export function scimErrorOf(run: () => unknown, otherwise = "expected a ScimError"): ScimError {
  try {
    run();
  } catch (error) {
    if (error instanceof ScimError) return error;
    throw error;
  }
  throw new Error(otherwise);
}

/** The admin API's whole error body for a refusal without details. */
export const adminError = (code: number, status: string, message: string) => ({
  error: { code, status, message, details: [] },
});
