/** RFC 7644 §3.12 scimType values used by Roster. */
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
