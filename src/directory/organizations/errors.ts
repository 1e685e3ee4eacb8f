/** A resource was created for an organization that does not exist (or was deleted meanwhile). */
export class OrganizationNotFoundError extends Error {
  readonly organizationId: string;
  constructor(organizationId: string) {
    super(`organization ${organizationId} does not exist`);
    this.name = "OrganizationNotFoundError";
    this.organizationId = organizationId;
  }
}
