/** The SCIM protocol's limits (page sizes, body size, filter length), in one place. */
export const MAX_COUNT = 1000;
export const DEFAULT_COUNT = 100;
export const MAX_START_INDEX = 5000;
export const MAX_FILTER_BYTES = 1024;
export const CURSOR_TTL_SECONDS = 3600;
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
export const FILTER_MAX_RESULTS = 1000;

/**
 * Input PostgreSQL could not store or index (docs/scim-users.md, "Limits"). A B-tree entry holds at most about
 * 2 700 bytes; 512 characters are at most 2 048 bytes of UTF-8 even lower-cased, so every indexed attribute fits
 * with room for the organization id beside it.
 */
export const MAX_USER_NAME_LENGTH = 512;
export const MAX_EXTERNAL_ID_LENGTH = 512;
export const MAX_EMAIL_LENGTH = 512;
export const MAX_DISPLAY_NAME_LENGTH = 512;
export const MAX_EMPLOYEE_NUMBER_LENGTH = 512;
/** A SCIM body nests a few levels (a PatchOp value holding the Enterprise manager is 5); 32 leaves room. */
export const MAX_JSON_DEPTH = 32;
/** How long an OAuth 2.0 access token of the client-credentials grant is valid (its `expires_in`). */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
