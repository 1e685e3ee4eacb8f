import type { Clock } from "../../platform/clock.js";
import { uuidv7 } from "../../platform/ids.js";
import { type DirectoryEvent, type EventSink, keyEventsOf, type OutboxBatch, membershipEventData } from "../events.js";
import { groupRaw } from "../groups/events.js";
import { checkVersion, type ExpectedVersions, VersionMismatchError, versionMatches } from "../preconditions.js";
import type { CompiledMapping, DataMapper } from "../mapping/mapper.js";
import { burnVerification, hashPassword, verifyPassword } from "../passwords.js";
import type { ScimClient } from "../scim-clients/types.js";
import { columnsOf as indexedColumnsOf, identifierKey, identifiersOf, sameJson } from "./document.js";
import { DocumentCache, type VersionedDocument } from "./document-cache.js";
import { ExtensionConflictError } from "./errors.js";
import { extensionValuesOf } from "./extension-values.js";
import { type LockedWrites, lockedUpdate } from "./locked-update.js";
import type { IdentityStore } from "./repo-store.js";
import type { Change, Identity, ReadView, StoredUser, UserDocument, UserWrite } from "./types.js";
import { visibleTo } from "./visible.js";
import { conflictOf, linkTarget, sameIdentifiers, sameIndexed, userEvent } from "./write-rules.js";

export type VerifyResult =
  | { readonly ok: true; readonly identity: Identity }
  | { readonly ok: false; readonly reason: "mismatch" | "inactive" };

/**
 * The writes of identities behind SCIM users. Every method takes the organization first; a write records its events in
 * the statement or transaction that makes it and announces them once committed; a write that changes nothing writes
 * and records nothing.
 */
export class IdentityCommands {
  readonly #store: IdentityStore;
  readonly #clock: Clock;
  readonly #events: EventSink;
  readonly #mapper: DataMapper;
  readonly #cache: DocumentCache;

  constructor(store: IdentityStore, clock: Clock, events: EventSink, mapper: DataMapper, cache = new DocumentCache(0)) {
    this.#store = store;
    this.#clock = clock;
    this.#events = events;
    this.#mapper = mapper;
    this.#cache = cache;
  }

  get #writes(): LockedWrites {
    return { store: this.#store, clock: this.#clock, events: this.#events };
  }

  /** POST /Users. With auto_link, a clash in the same organization on userName or primary email becomes a replace. */
  async create(
    orgId: string,
    client: ScimClient,
    write: UserWrite,
    view: ReadView,
  ): Promise<{ user: StoredUser; linked: boolean }> {
    const mapping = await this.#mapper.forSource(client.mapping, orgId);
    const now = this.#clock.now();
    const id = uuidv7(now.getTime());
    const traits = await mapping.evaluate({ id, ...write.scim });
    const passwordHash = write.password === undefined ? null : await hashPassword(write.password);
    const identifiers = identifiersOf(write.scim);
    const extensionValues = extensionValuesOf(write.scim, client.indexedAttributes);
    let extensionConflict = false;
    try {
      const events = this.#events.batch(client, [
        userEvent(client, "user.created", id, write.scim),
        ...keyEventsOf(id, undefined, write.scim),
      ]);
      const user = await this.#store.create(
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
      this.#cache.remember(orgId, user, flowedFor(user, events));
      return { user: { ...user, groups: view.groups ? [] : undefined }, linked: false };
    } catch (e) {
      const clash = this.#store.uniqueClash(e);
      // With auto_link, a retried create may meet its own unique extension value: link as for its userName.
      if (clash === "extension" && !client.autoLink) throw new ExtensionConflictError();
      if (clash === undefined) throw e;
      if (clash === "extension") extensionConflict = true;
    }
    const owners = await this.#store.identifierOwners(identifiers.map((x) => x.value));
    const target = client.autoLink ? linkTarget(orgId, write.scim, owners) : undefined;
    if (target !== undefined) {
      const user = await this.update(orgId, client, target, () => write, view);
      if (user !== undefined) return { user, linked: true };
    }
    if (extensionConflict) throw new ExtensionConflictError();
    throw conflictOf(orgId, undefined, owners);
  }

  /**
   * PUT and PATCH. The password changes only when `change` returns one. The change runs on the
   * remembered document when there is one (see DocumentCache) and is written with its version guard: one round trip.
   * Otherwise, or when that write does not apply, the row is read without a lock and the change written the same
   * way: two round trips instead of BEGIN, SELECT … FOR UPDATE, UPDATE, outbox INSERT, COMMIT. Writes that touch
   * the password or the identifiers, and rows changed in between, take the locked path. With `expected` (If-Match),
   * the version the write is guarded by, or the locked row's, must be one of them: else VersionMismatchError.
   */
  async update(
    orgId: string,
    client: ScimClient,
    id: string,
    change: Change,
    view: ReadView,
    expected?: ExpectedVersions,
  ): Promise<StoredUser | undefined> {
    const mapping = await this.#mapper.forSource(client.mapping, orgId);
    const remembered = this.#cache.get(orgId, id);
    // A remembered document at another version may be outdated: only a fresh read can refuse the request.
    if (remembered !== undefined && versionMatches(expected, remembered.version)) {
      const done = await this.#guarded(orgId, client, id, remembered, undefined, change, view, mapping);
      if (done !== undefined) return done;
    }
    const current = await this.#store.read(orgId, id, view.groups);
    if (current === undefined) {
      this.#cache.forget(orgId, id);
      return undefined;
    }
    checkVersion(expected, current.version);
    const done = await this.#guarded(orgId, client, id, current, current, change, view, mapping);
    if (done !== undefined) return done;
    const locked = await lockedUpdate(this.#writes, orgId, client, id, change, view, mapping, expected);
    if (locked === undefined) return undefined;
    this.#cache.remember(orgId, locked);
    return locked;
  }

  /**
   * `change` applied to `base` and written in one statement guarded by `base.version`; undefined when that cannot
   * be. `read` is the row `base` was read from just now; without it, `base` is a remembered document that may be
   * outdated, so only an applied write counts: a refusal or "nothing changed" is left to a fresh read.
   */
  async #guarded(
    orgId: string,
    client: ScimClient,
    id: string,
    base: VersionedDocument,
    read: StoredUser | undefined,
    change: Change,
    view: ReadView,
    mapping: CompiledMapping,
  ): Promise<StoredUser | undefined> {
    const document: UserDocument = base.document.copy();
    let planned: { write: UserWrite; traits: Record<string, unknown> } | undefined;
    try {
      const write = change(document);
      if (write.password !== undefined) return undefined;
      if (sameJson(document, write.scim)) return read;
      if (!sameIdentifiers(document, write.scim) || !sameIndexed(client, document, write.scim)) return undefined;
      planned = { write, traits: await mapping.evaluate({ id, ...write.scim }) };
    } catch (e) {
      if (read !== undefined) throw e;
      return undefined;
    }
    const { write, traits } = planned;
    const events = this.#events.batch(client, [
      userEvent(client, "user.updated", id, write.scim),
      ...keyEventsOf(id, document, write.scim),
    ]);
    const user = await this.#store.updateAt(
      orgId,
      id,
      base.version,
      { ...indexedColumnsOf(write.scim), scim: write.scim, traits, now: this.#clock.now() },
      view.groups,
      events,
      document.active !== false,
      // Only a remembered document carries what became of its write's events (DocumentCache).
      read === undefined && base.flowedFor === events.directoryId,
    );
    if (user === undefined) return undefined;
    this.#events.committed(events);
    this.#cache.remember(orgId, user, flowedFor(user, events));
    return user;
  }

  /**
   * Deletes the identity, its identifiers, credential and memberships (FK cascades). Each group it was a
   * direct member of gets a group.user_removed (keyed by the group), recorded before the user.deleted; each user
   * that named it as manager loses that manager and gets a user.updated, recorded after it. With `expected`
   * (If-Match), the delete itself applies only at one of those versions; otherwise the transaction rolls back with
   * VersionMismatchError.
   */
  async delete(orgId: string, client: ScimClient, id: string, expected?: ExpectedVersions): Promise<boolean> {
    this.#cache.forget(orgId, id);
    return this.#store.transaction(this.#events, async (uow) => {
      const groups = await uow.touchGroupsOf(orgId, id, this.#clock.now());
      const deleted = await uow.delete(orgId, id, expected);
      if (deleted === undefined) {
        const version = expected === undefined ? undefined : await uow.versionOf(orgId, id);
        if (version !== undefined) throw new VersionMismatchError(version);
        return false;
      }
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
      const reports = await uow.clearManager(orgId, id, this.#clock.now());
      for (const report of reports) this.#cache.forget(orgId, report.id);
      await uow.record(client, [
        ...removed,
        userEvent(client, "user.deleted", id, deleted.scim),
        ...keyEventsOf(id, deleted.scim, "deleted"),
        ...reports.map((r) => userEvent(client, "user.updated", r.id, r.scim)),
      ]);
      return true;
    });
  }

  /**
   * The password must match an active identity. Unknown identifiers and identities without a password verify
   * against a dummy hash, so every answer costs one argon2 verification.
   */
  async verifyPassword(identifier: string, password: string): Promise<VerifyResult> {
    const found = await this.#store.credentialOf(identifierKey(identifier));
    const matches =
      found === undefined || found.passwordHash === null
        ? await burnVerification(password)
        : await verifyPassword(found.passwordHash, password);
    if (!matches || found === undefined) return { ok: false, reason: "mismatch" };
    // An inactive user cannot log in.
    if (!found.identity.active) return { ok: false, reason: "inactive" };
    return { ok: true, identity: found.identity };
  }
}

/** The connection a written user's remembered version records as its events' (DocumentCache), if they flowed. */
const flowedFor = (user: { readonly flowed: boolean }, events: OutboxBatch): string | undefined =>
  user.flowed ? (events.directoryId ?? undefined) : undefined;
