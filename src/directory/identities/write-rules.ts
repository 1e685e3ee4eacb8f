import { type DirectoryEvent, userEventData } from "../events.js";
import type { ScimClient } from "../scim-clients/types.js";
import { identifierKey, identifiersOf, primaryEmail } from "./document.js";
import { IdentityConflictError } from "./errors.js";
import { extensionValuesOf, sameExtensionValues } from "./extension-values.js";
import type { IdentifierOwner } from "./repo-index.js";
import type { UserDocument } from "./types.js";
import { visibleTo } from "./visible.js";

/** Whether two documents have the same values in the client's extension index (always, for most clients). */
export function sameIndexed(client: ScimClient, a: UserDocument, b: UserDocument): boolean {
  if (client.indexedAttributes.length === 0) return true;
  return sameExtensionValues(
    extensionValuesOf(a, client.indexedAttributes),
    extensionValuesOf(b, client.indexedAttributes),
  );
}

/** Whether two documents have the same identifiers (values and kinds): a write that keeps them leaves their rows. */
export function sameIdentifiers(a: UserDocument, b: UserDocument): boolean {
  const before = identifiersOf(a);
  const after = identifiersOf(b);
  return (
    before.length === after.length && before.every((x, i) => x.value === after[i]?.value && x.kind === after[i]?.kind)
  );
}

/** Auto-link: the identity of this organization that holds the userName, else the primary email. */
export function linkTarget(orgId: string, doc: UserDocument, owners: readonly IdentifierOwner[]): string | undefined {
  const userName = typeof doc.userName === "string" ? identifierKey(doc.userName) : undefined;
  const email = primaryEmail(doc);
  for (const wanted of [userName, email === undefined ? undefined : identifierKey(email)]) {
    const owner = owners.find((o) => o.value === wanted && o.organization_id === orgId);
    if (owner !== undefined) return owner.identity_id;
  }
  return undefined;
}

/** Where a taken identifier is held: in this organization, or only in others. */
export function conflictOf(
  orgId: string,
  self: string | undefined,
  owners: readonly IdentifierOwner[],
): IdentityConflictError {
  const others = owners.filter((o) => o.identity_id !== self);
  const foreign = others.length > 0 && others.every((o) => o.organization_id !== orgId);
  return new IdentityConflictError(foreign ? "another" : "organization");
}

/** A webhook's `raw` is the user as the client sees it (another client's extensions left out). */
export function userEvent(
  client: ScimClient,
  kind: DirectoryEvent["kind"],
  id: string,
  scim: UserDocument,
): DirectoryEvent {
  return { kind, resourceId: id, data: userEventData({ id, ...visibleTo(client, scim) }) };
}
