/** Why a group change was refused; the protocol adapter maps each reason to its own error (SCIM: its scimType). */
export type GroupErrorReason = "externalIdTaken" | "extensionValueTaken" | "invalidMember" | "cycle";

export class GroupError extends Error {
  constructor(
    readonly reason: GroupErrorReason,
    message: string,
  ) {
    super(message);
    this.name = "GroupError";
  }
}
