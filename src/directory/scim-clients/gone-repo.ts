import { isForeignKeyViolation } from "../../storage/errors.js";
import { ClientGoneError } from "./errors.js";

/**
 * The constraints a directory write breaks when its SCIM client (or the client's organization) was deleted between
 * authenticating the request and writing: the event rows reference the client, the resources their organization.
 */
const CLIENT_GONE_CONSTRAINTS: readonly string[] = [
  "webhook_outbox_client_fkey",
  "directory_events_client_fkey",
  "held_events_client_fkey",
  "identities_organization_fkey",
  "directory_groups_organization_fkey",
];

/**
 * Rethrows what a directory write threw, a broken client constraint as the domain's ClientGoneError; for the
 * repositories that write resources and their events (`.catch(rethrowClientGone)` on the statement or transaction).
 */
export function rethrowClientGone(e: unknown): never {
  if (CLIENT_GONE_CONSTRAINTS.some((c) => isForeignKeyViolation(e, c))) throw new ClientGoneError();
  throw e;
}
