/**
 * Limits of admin request fields and bodies (docs/api-keys.md lists the API key ones, kept in apikeys/model.ts).
 * Lengths are in UTF-16 code units; every indexed field stays far below a B-tree entry's ~2 700 bytes.
 */
export const MAX_ORGANIZATION_NAME_LENGTH = 256;
export const MAX_IDENTIFIER_LENGTH = 1024;
/** Admin bodies nest little (API key metadata is the deepest); deeper is refused before anything recurses on it. */
export const MAX_ADMIN_JSON_DEPTH = 32;
