/** Why a group change was refused; the protocol adapter maps each reason to its own error (SCIM: its scimType). */
export type GroupErrorReason = "externalIdTaken" | "extensionValueTaken" | "invalidMember" | "cycle";

export class GroupError extends Error {
  readonly reason: GroupErrorReason;

  constructor(reason: GroupErrorReason, message: string) {
    super(message);
    this.name = "GroupError";
    this.reason = reason;
  }
}
