import type { Clock } from "../../platform/clock.js";
import { uuidv7 } from "../../platform/ids.js";
import type { Db } from "../../storage/database.js";
import { isUniqueViolation } from "../../storage/errors.js";
import { type DirectoryEvent, type EventSink, membershipEventData, userEventData } from "../events.js";
import { transactionWithEvents } from "../events-repo.js";
import { groupRaw } from "../groups/events.js";
import type { CompiledMapping, DataMapper } from "../mapping/mapper.js";
import { burnVerification, hashPassword, verifyPassword } from "../passwords.js";
import type { ScimClient } from "../scim-clients/service.js";
import { columnsOf as indexedColumnsOf, identifierKey, identifiersOf, sameJson } from "./document.js";
import { ExtensionConflictError } from "./errors.js";
import { extensionValuesOf } from "./extension-values.js";
import * as repo from "./repo.js";
import { toRecord } from "./repo-columns.js";
import { deleteIdentifiers, identifierOwners, insertIdentifiers } from "./repo-index.js";
import { credentialOf } from "./repo-reads.js";
import { toIdentity } from "./queries.js";
import type { Identity, ReadView, UserDocument, UserRecord, UserWrite } from "./types.js";
import { conflictOf, linkTarget, sameIdentifiers, sameIndexed } from "./write-rules.js";
import { visibleTo } from "./visible.js";

export type VerifyResult =
  | { readonly ok: true; readonly identity: Identity }
  | { readonly ok: false; readonly reason: "mismatch" | "inactive" };

/** Turns the stored document into the one to write; it may throw to refuse the request. */
export type Change = (current: UserDocument) => UserWrite;

/**
 * The writes of identities behind SCIM users. Every method takes the organization first; a write records its events in
 * the statement or transaction that makes it and announces them once committed; a write that changes nothing writes
 * and records nothing.
 */
export class IdentityCommands {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #events: EventSink;
  readonly #mapper: DataMapper;

  constructor(db: Db, clock: Clock, events: EventSink, mapper: DataMapper) {
    this.#db = db;
    this.#clock = clock;
    this.#events = events;
    this.#mapper = mapper;
  }

  /** POST /Users. With auto_link, a clash in the same organization on userName or primary email becomes a replace. */
  async create(
    orgId: string,
    client: ScimClient,
    write: UserWrite,
    view: ReadView,
  ): Promise<{ user: UserRecord; linked: boolean }> {
    const mapping = await this.#mapper.forSource(client.mapping);
    const now = this.#clock.now();
    const id = uuidv7(now.getTime());
    const traits = await mapping.evaluate({ id, ...write.scim });
    const passwordHash = write.password === undefined ? null : await hashPassword(write.password);
    const identifiers = identifiersOf(write.scim);
    const extensionValues = extensionValuesOf(write.scim, client.indexedAttributes);
    let extensionConflict = false;
    try {
      const events = this.#events.batch(client, [userEvent(client, "user.created", id, write.scim)]);
      const row = await repo.createUser(
        this.#db,
        {
          id,
          organization_id: orgId,
          ...indexedColumnsOf(write.scim),
          scim: write.scim,
          traits,
          password_hash: passwordHash,
          now,
        },
        identifiers,
        events,
        extensionValues,
      );
      this.#events.committed(events);
      return { user: { ...toRecord(row), groups: view.groups ? "[]" : undefined }, linked: false };
    } catch (e) {
      const extensionClash = isUniqueViolation(e, repo.EXTENSION_UNIQUE_KEY);
      // With auto_link, a retried create may meet its own unique extension value: link as for its userName.
      if (extensionClash && !client.autoLink) throw new ExtensionConflictError();
      if (!extensionClash && !isUniqueViolation(e, repo.IDENTIFIERS_KEY)) throw e;
      if (extensionClash) extensionConflict = true;
    }
    const owners = await identifierOwners(
      this.#db,
      identifiers.map((x) => x.value),
    );
    const target = client.autoLink ? linkTarget(orgId, write.scim, owners) : undefined;
    if (target !== undefined) {
      const user = await this.update(orgId, client, target, () => write, view);
      if (user !== undefined) return { user, linked: true };
    }
    if (extensionConflict) throw new ExtensionConflictError();
    throw conflictOf(orgId, undefined, owners);
  }

  /** PUT and PATCH. The password changes only when `change` returns one (spec 4.5.1). */
  async update(
    orgId: string,
    client: ScimClient,
    id: string,
    change: Change,
    view: ReadView,
  ): Promise<UserRecord | undefined> {
    const mapping = await this.#mapper.forSource(client.mapping);
    // Read without a lock, then one statement that writes only if the row is still the version read: two round trips
    // instead of BEGIN, SELECT … FOR UPDATE, UPDATE, outbox INSERT, COMMIT. Writes that touch the password or the
    // identifiers, and rows changed in between, take the locked path.
    const current = await repo.readUser(this.#db, orgId, id, view.groups);
    if (current === undefined) return undefined;
    const document = JSON.parse(current.document) as UserDocument;
    const write = change(document);
    if (write.password === undefined) {
      if (sameJson(document, write.scim)) return toRecord(current);
      if (sameIdentifiers(document, write.scim) && sameIndexed(client, document, write.scim)) {
        const traits = await mapping.evaluate({ id, ...write.scim });
        const events = this.#events.batch(client, [userEvent(client, "user.updated", id, write.scim)]);
        const row = await repo.updateUserAt(
          this.#db,
          orgId,
          id,
          current.version,
          { ...indexedColumnsOf(write.scim), scim: write.scim, traits, now: this.#clock.now() },
          view.groups,
          events,
        );
        if (row !== undefined) {
          this.#events.committed(events);
          return toRecord(row);
        }
      }
    }
    return this.#lockedUpdate(orgId, client, id, change, view, mapping);
  }

  /** PUT and PATCH under the row lock: password changes, identifier changes, and retries of the fast path. */
  async #lockedUpdate(
    orgId: string,
    client: ScimClient,
    id: string,
    change: Change,
    view: ReadView,
    mapping: CompiledMapping,
  ): Promise<UserRecord | undefined> {
    let identifiers: string[] = [];
    try {
      return await transactionWithEvents(this.#db, this.#events, async (trx, record) => {
        const current = await repo.lockUser(trx, orgId, id, view.groups);
        if (current === undefined) return undefined;
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
        if (!scimChanged && passwordHash === undefined) return toRecord(current);
        const traits = await mapping.evaluate({ id, ...write.scim });
        const row = await repo.updateUser(
          trx,
          orgId,
          id,
          {
            ...indexedColumnsOf(write.scim),
            scim: write.scim,
            traits,
            now: this.#clock.now(),
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
        await record(client, [userEvent(client, "user.updated", id, write.scim)]);
        return toRecord(row);
      });
    } catch (e) {
      if (isUniqueViolation(e, repo.EXTENSION_UNIQUE_KEY)) throw new ExtensionConflictError();
      if (!isUniqueViolation(e, repo.IDENTIFIERS_KEY)) throw e;
      throw conflictOf(orgId, id, await identifierOwners(this.#db, identifiers));
    }
  }

  /**
   * Deletes the identity, its identifiers, credential and memberships (FK cascades); spec 3. Each group it was a
   * direct member of gets a group.user_removed (keyed by the group), recorded before the user.deleted.
   */
  async delete(orgId: string, client: ScimClient, id: string): Promise<boolean> {
    return transactionWithEvents(this.#db, this.#events, async (trx, record) => {
      const groups = await repo.touchGroupsOf(trx, orgId, id, this.#clock.now());
      const deleted = await repo.deleteUser(trx, orgId, id);
      if (deleted === undefined) return false;
      // The same data as a group PATCH's group.user_removed (groups/events.ts membershipEvents).
      const member = { ...visibleTo(client, deleted.scim), id };
      const removed: DirectoryEvent[] = groups.map((g) => ({
        kind: "group.user_removed",
        resourceId: g.id,
        data: membershipEventData(
          member,
          groupRaw({ id: g.id, displayName: g.display_name, externalId: g.external_id }),
        ),
      }));
      await record(client, [...removed, userEvent(client, "user.deleted", id, deleted.scim)]);
      return true;
    });
  }

  /**
   * The password must match an active identity. Unknown identifiers and identities without a password verify
   * against a dummy hash, so every answer costs one argon2 verification.
   */
  async verifyPassword(identifier: string, password: string): Promise<VerifyResult> {
    const row = await credentialOf(this.#db, identifierKey(identifier));
    const matches =
      row === undefined || row.password_hash === null
        ? await burnVerification(password)
        : await verifyPassword(row.password_hash, password);
    if (!matches || row === undefined) return { ok: false, reason: "mismatch" };
    // Spec 3: an inactive user cannot log in.
    if (!row.active) return { ok: false, reason: "inactive" };
    return { ok: true, identity: toIdentity(row) };
  }
}

/** A webhook's `raw` is the user as the client sees it (another client's extensions left out). */
function userEvent(client: ScimClient, kind: DirectoryEvent["kind"], id: string, scim: UserDocument): DirectoryEvent {
  return { kind, resourceId: id, data: userEventData({ id, ...visibleTo(client, scim) }) };
}
