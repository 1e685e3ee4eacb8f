/** Protocol limits of spec section 8, in one place. */
export const MAX_COUNT = 1000;
export const DEFAULT_COUNT = 100;
export const MAX_START_INDEX = 5000;
export const MAX_FILTER_BYTES = 1024;
export const CURSOR_TTL_SECONDS = 3600;
export const MAX_BODY_BYTES = 16 * 1024 * 1024;
export const FILTER_MAX_RESULTS = 1000;
