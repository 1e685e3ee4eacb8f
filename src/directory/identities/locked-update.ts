import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../storage/database.js";
import { isUniqueViolation } from "../../storage/errors.js";
import { type EventSink, keyEventsOf } from "../events.js";
import { transactionWithEvents } from "../events-repo.js";
import type { CompiledMapping } from "../mapping/mapper.js";
import { hashPassword, verifyPassword } from "../passwords.js";
import { checkVersion, type ExpectedVersions } from "../preconditions.js";
import type { ScimClient } from "../scim-clients/types.js";
import { columnsOf as indexedColumnsOf, identifiersOf, sameJson } from "./document.js";
import { ExtensionConflictError } from "./errors.js";
import { extensionValuesOf } from "./extension-values.js";
import * as repo from "./repo.js";
import type { RecordRow } from "./repo-columns.js";
import { deleteIdentifiers, identifierOwners, insertIdentifiers } from "./repo-index.js";
import type { Change, ReadView, UserDocument } from "./types.js";
import { conflictOf, sameIndexed, userEvent } from "./write-rules.js";

export interface LockedWrites {
  readonly db: Db;
  readonly clock: Clock;
  readonly events: EventSink;
}

/** PUT and PATCH under the row lock: password changes, identifier changes, and retries of the fast path. */
export async function lockedUpdate(
  { db, clock, events }: LockedWrites,
  orgId: string,
  client: ScimClient,
  id: string,
  change: Change,
  view: ReadView,
  mapping: CompiledMapping,
  expected?: ExpectedVersions,
): Promise<RecordRow | undefined> {
  let identifiers: string[] = [];
  try {
    return await transactionWithEvents(db, events, async (trx, record) => {
      const current = await repo.lockUser(trx, orgId, id, view.groups);
      if (current === undefined) return undefined;
      checkVersion(expected, current.version);
      const document = JSON.parse(current.document) as UserDocument;
      const write = change(document);
      const scimChanged = !sameJson(document, write.scim);
      let passwordHash: string | undefined;
      if (write.password !== undefined) {
        const same =
          !scimChanged &&
          current.password_hash !== null &&
          (await verifyPassword(current.password_hash, write.password));
        if (!same) passwordHash = await hashPassword(write.password);
      }
      if (!scimChanged && passwordHash === undefined) return current;
      const traits = await mapping.evaluate({ id, ...write.scim });
      const row = await repo.updateUser(
        trx,
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
      await deleteIdentifiers(
        trx,
        id,
        [...before].filter(([value, kind]) => kept.get(value) !== kind).map(([value]) => value),
      );
      identifiers = added.map((x) => x.value);
      await insertIdentifiers(trx, orgId, id, added);
      if (!sameIndexed(client, document, write.scim)) {
        await repo.replaceExtensionValues(
          trx,
          orgId,
          id,
          client.indexedAttributes.map((a) => a.key),
          extensionValuesOf(write.scim, client.indexedAttributes),
        );
      }
      await record(client, [
        userEvent(client, "user.updated", id, write.scim),
        ...keyEventsOf(id, document, write.scim),
      ]);
      return row;
    });
  } catch (e) {
    if (isUniqueViolation(e, repo.EXTENSION_UNIQUE_KEY)) throw new ExtensionConflictError();
    if (!isUniqueViolation(e, repo.IDENTIFIERS_KEY)) throw e;
    throw conflictOf(orgId, id, await identifierOwners(db, identifiers));
  }
}
