/** google.rpc-style status names of the admin API error body. */
export type AdminStatus =
  | "INVALID_ARGUMENT"
  | "UNAUTHENTICATED"
  | "PERMISSION_DENIED"
  | "NOT_FOUND"
  | "ALREADY_EXISTS"
  | "FAILED_PRECONDITION"
  | "ABORTED"
  | "RESOURCE_EXHAUSTED"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "INTERNAL"
  | "UNAVAILABLE";

const HTTP: Record<AdminStatus, number> = {
  INVALID_ARGUMENT: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  FAILED_PRECONDITION: 412,
  ABORTED: 409,
  RESOURCE_EXHAUSTED: 429,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

/** The one error type of the admin API, rendered as `{"error": {code, status, message, details}}`. */
export class AdminError extends Error {
  readonly status: AdminStatus;
  readonly details: readonly unknown[];
  /** An HTTP status other than the status name's usual one (410 for an expired feed position). */
  readonly #http: number | undefined;
  constructor(status: AdminStatus, message: string, details: readonly unknown[] = [], httpStatus?: number) {
    super(message);
    this.name = "AdminError";
    this.status = status;
    this.details = details;
    this.#http = httpStatus;
  }
  get httpStatus(): number {
    return this.#http ?? HTTP[this.status];
  }
}

export const invalidArgument = (message: string): AdminError => new AdminError("INVALID_ARGUMENT", message);
export const notFound = (message: string): AdminError => new AdminError("NOT_FOUND", message);

export const errorBody = (
  httpStatus: number,
  status: AdminStatus,
  message: string,
  details: readonly unknown[] = [],
) => ({
  error: { code: httpStatus, status, message, details },
});
