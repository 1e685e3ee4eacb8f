import type { Clock } from "../../platform/clock.js";
import { type EventSink, keyEventsOf } from "../events.js";
import type { CompiledMapping } from "../mapping/mapper.js";
import { hashPassword, verifyPassword } from "../passwords.js";
import { checkVersion, type ExpectedVersions } from "../preconditions.js";
import type { ScimClient } from "../scim-clients/types.js";
import { columnsOf as indexedColumnsOf, identifiersOf, sameJson } from "./document.js";
import { ExtensionConflictError } from "./errors.js";
import { extensionValuesOf } from "./extension-values.js";
import type { IdentityStore, LockedUser } from "./repo-store.js";
import type { Change, ReadView, StoredUser } from "./types.js";
import { conflictOf, sameIndexed, userEvent } from "./write-rules.js";

export interface LockedWrites {
  readonly store: IdentityStore;
  readonly clock: Clock;
  readonly events: EventSink;
}

/** PUT and PATCH under the row lock: password changes, identifier changes, and retries of the fast path. */
export async function lockedUpdate(
  { store, clock, events }: LockedWrites,
  orgId: string,
  client: ScimClient,
  id: string,
  change: Change,
  view: ReadView,
  mapping: CompiledMapping,
  expected?: ExpectedVersions,
): Promise<StoredUser | undefined> {
  let identifiers: string[] = [];
  try {
    return await store.transaction(events, async (uow): Promise<StoredUser | undefined> => {
      const current = await uow.lock(orgId, id, view.groups);
      if (current === undefined) return undefined;
      checkVersion(expected, current.version);
      const document = current.document.copy();
      const write = change(document);
      const scimChanged = !sameJson(document, write.scim);
      const passwordHash = await newPasswordHash(current, write.password, scimChanged);
      if (!scimChanged && passwordHash === undefined) return withoutHash(current);
      const traits = await mapping.evaluate({ id, ...write.scim });
      const user = await uow.update(
        orgId,
        id,
        {
          ...indexedColumnsOf(write.scim),
          scim: write.scim,
          traits,
          now: clock.now(),
          ...(passwordHash === undefined ? {} : { password_hash: passwordHash }),
        },
        view.groups,
      );
      const before = new Map(identifiersOf(document).map((x) => [x.value, x.kind]));
      const after = identifiersOf(write.scim);
      const added = after.filter((x) => before.get(x.value) !== x.kind);
      const kept = new Map(after.map((x) => [x.value, x.kind]));
      const removed = [...before].filter(([value, kind]) => kept.get(value) !== kind).map(([value]) => value);
      identifiers = added.map((x) => x.value);
      await uow.replaceIdentifiers(orgId, id, removed, added);
      if (!sameIndexed(client, document, write.scim)) {
        await uow.replaceExtensionValues(
          orgId,
          id,
          client.indexedAttributes.map((a) => a.key),
          extensionValuesOf(write.scim, client.indexedAttributes),
        );
      }
      await uow.record(client, [
        userEvent(client, "user.updated", id, write.scim),
        ...keyEventsOf(id, document, write.scim),
      ]);
      return user;
    });
  } catch (e) {
    const clash = store.uniqueClash(e);
    if (clash === "extension") throw new ExtensionConflictError();
    if (clash !== "identifier") throw e;
    throw conflictOf(orgId, id, await store.identifierOwners(identifiers));
  }
}

/** The hash to store for `password`: none when there is none, or when it is the stored one and nothing else changed. */
async function newPasswordHash(
  current: LockedUser,
  password: string | undefined,
  scimChanged: boolean,
): Promise<string | undefined> {
  if (password === undefined) return undefined;
  const same = !scimChanged && current.passwordHash !== null && (await verifyPassword(current.passwordHash, password));
  return same ? undefined : hashPassword(password);
}

const withoutHash = ({ passwordHash: _hash, ...user }: LockedUser): StoredUser => user;
