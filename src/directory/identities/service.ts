import type { Clock } from "../../platform/clock.js";
import { uuidv7 } from "../../platform/ids.js";
import type { Db } from "../../storage/database.js";
import { isUniqueViolation } from "../../storage/errors.js";
import { type DirectoryEvent, type EventSink, membershipEventData, userEventData } from "../events.js";
import { groupRaw } from "../groups/events.js";
import type { CompiledMapping, DataMapper } from "../mapping/mapper.js";
import { burnVerification, hashPassword, verifyPassword } from "../passwords.js";
import type { ScimClient } from "../scim-clients/types.js";
import { columnsOf, identifierKey, identifiersOf, primaryEmail, sameJson } from "./document.js";
import { ExtensionConflictError, IdentityConflictError } from "./errors.js";
import { extensionValuesOf, sameExtensionValues } from "./extension-values.js";
import { visibleTo } from "./visible.js";
import * as repo from "./repo.js";
import type {
  GroupRef,
  Identity,
  ReadView,
  StoredUser,
  UserDocument,
  UserFilter,
  UserPage,
  UserText,
  UserWrite,
} from "./types.js";

/**
 * Whether a document whose `schemas` array reads as this JSON text may be returned as stored: every schema in it is
 * one the reading client sees whole (another client's extension, or an attribute it never returns, needs the
 * object path).
 */
export type PlainSchemas = (schemasText: string) => boolean;

export type VerifyResult =
  | { readonly ok: true; readonly identity: Identity }
  | { readonly ok: false; readonly reason: "mismatch" | "inactive" };

/**
 * Identities behind SCIM users (issue 3, DESIGN.md "Domain"). Every method takes the organization first; writes run
 * in one transaction that also records their events; a write that changes nothing writes and records nothing.
 */
export class IdentityService {
  readonly #db: Db;
  /** For GET and list: the pool with generic plans (storage/open.ts), or db. */
  readonly #reads: Db;
  readonly #clock: Clock;
  readonly #events: EventSink;
  readonly #mapper: DataMapper;

  constructor(db: Db, clock: Clock, events: EventSink, mapper: DataMapper, reads: Db = db) {
    this.#db = db;
    this.#reads = reads;
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
  ): Promise<{ user: StoredUser; linked: boolean }> {
    const mapping = await this.#mapper.forSource(client.mapping);
    const now = this.#clock.now();
    const id = uuidv7(now.getTime());
    const traits = await mapping.evaluate({ id, ...write.scim });
    const passwordHash = write.password === undefined ? null : await hashPassword(write.password);
    const identifiers = identifiersOf(write.scim);
    const extensionValues = extensionValuesOf(write.scim, client.indexedAttributes);
    let extensionConflict = false;
    try {
      const row = await repo.createUser(
        this.#db,
        {
          id,
          organization_id: orgId,
          ...columnsOf(write.scim),
          scim: write.scim,
          traits,
          password_hash: passwordHash,
          now,
        },
        identifiers,
        (when) => this.#events.inline(client, [this.#event(client, "user.created", id, write.scim)], when),
        extensionValues,
      );
      return { user: toStoredUser(row, view.groups ? [] : undefined), linked: false };
    } catch (e) {
      const extensionClash = isUniqueViolation(e, repo.EXTENSION_UNIQUE_KEY);
      // With auto_link, a retried create may meet its own unique extension value: link as for its userName.
      if (extensionClash && !client.autoLink) throw new ExtensionConflictError();
      if (!extensionClash && !isUniqueViolation(e, repo.IDENTIFIERS_KEY)) throw e;
      if (extensionClash) extensionConflict = true;
    }
    const owners = await repo.identifierOwners(
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

  /**
   * A read with nothing to project (all attributes, memberships included) as JSON text, to splice into the response
   * without parsing the document; a user whose rendering needs object work (the manager's displayName, a document
   * holding a key the server owns) comes back as a StoredUser instead.
   */
  async getText(orgId: string, id: string, plain: PlainSchemas): Promise<UserText | StoredUser | undefined> {
    const row = await repo.findUserText(this.#reads, orgId, id);
    return row === undefined ? undefined : fromTextRow(orgId, row, plain);
  }

  async listText(
    orgId: string,
    filter: UserFilter | undefined,
    page: UserPage,
    plain: PlainSchemas,
  ): Promise<{ rows: (UserText | StoredUser)[]; total?: number }> {
    const { rows, total } = await repo.listUsersText(this.#reads, orgId, filter, page);
    const users = rows.map((row) => fromTextRow(orgId, row, plain));
    return total === undefined ? { rows: users } : { rows: users, total };
  }

  async get(orgId: string, id: string, view: ReadView): Promise<StoredUser | undefined> {
    const row = await repo.findUser(this.#reads, orgId, id, view.groups);
    return row === undefined ? undefined : toStoredUser(row, view.groups ? (row.groups ?? []) : undefined);
  }

  /**
   * PUT and PATCH: `change` turns the stored document into the one to write (it may throw to refuse the request).
   * The password changes only when `change` returns one (spec 4.5.1).
   */
  async update(
    orgId: string,
    client: ScimClient,
    id: string,
    change: (current: UserDocument) => UserWrite,
    view: ReadView,
  ): Promise<StoredUser | undefined> {
    const mapping = await this.#mapper.forSource(client.mapping);
    // Fast path (issue 8): read without a lock, then one statement that writes only if the row is still the version
    // read. Two round trips instead of BEGIN, SELECT … FOR UPDATE, UPDATE, outbox INSERT, COMMIT. Writes that touch
    // the password or the identifiers, and rows changed in between, take the locked path below.
    const current = await repo.readUser(this.#db, orgId, id, view.groups);
    if (current === undefined) return undefined;
    const write = change(current.scim);
    if (write.password === undefined) {
      if (sameJson(current.scim, write.scim)) {
        return toStoredUser(current, view.groups ? (current.groups ?? []) : undefined);
      }
      if (sameIdentifiers(current.scim, write.scim) && sameIndexed(client, current.scim, write.scim)) {
        const traits = await mapping.evaluate({ id, ...write.scim });
        const row = await repo.updateUserAt(
          this.#db,
          orgId,
          id,
          current.version,
          { ...columnsOf(write.scim), scim: write.scim, traits, now: this.#clock.now() },
          view.groups,
          (when) => this.#events.inline(client, [this.#event(client, "user.updated", id, write.scim)], when),
        );
        if (row !== undefined) return toStoredUser(row, view.groups ? (row.groups ?? []) : undefined);
      }
    }
    return this.#lockedUpdate(orgId, client, id, change, view, mapping);
  }

  /** PUT and PATCH under the row lock: password changes, identifier changes, and retries of the fast path. */
  async #lockedUpdate(
    orgId: string,
    client: ScimClient,
    id: string,
    change: (current: UserDocument) => UserWrite,
    view: ReadView,
    mapping: CompiledMapping,
  ): Promise<StoredUser | undefined> {
    let identifiers: string[] = [];
    try {
      return await this.#db.transaction().execute(async (trx) => {
        const current = await repo.lockUser(trx, orgId, id, view.groups);
        if (current === undefined) return undefined;
        const write = change(current.scim);
        const scimChanged = !sameJson(current.scim, write.scim);
        let passwordHash: string | undefined;
        if (write.password !== undefined) {
          const same =
            !scimChanged &&
            current.password_hash !== null &&
            (await verifyPassword(current.password_hash, write.password));
          if (!same) passwordHash = await hashPassword(write.password);
        }
        if (!scimChanged && passwordHash === undefined) {
          return toStoredUser(current, view.groups ? (current.groups ?? []) : undefined);
        }
        const traits = await mapping.evaluate({ id, ...write.scim });
        const row = await repo.updateUser(
          trx,
          orgId,
          id,
          {
            ...columnsOf(write.scim),
            scim: write.scim,
            traits,
            now: this.#clock.now(),
            ...(passwordHash === undefined ? {} : { password_hash: passwordHash }),
          },
          view.groups,
        );
        const before = new Map(identifiersOf(current.scim).map((x) => [x.value, x.kind]));
        const after = identifiersOf(write.scim);
        const added = after.filter((x) => before.get(x.value) !== x.kind);
        const kept = new Map(after.map((x) => [x.value, x.kind]));
        await repo.deleteIdentifiers(
          trx,
          id,
          [...before].filter(([value, kind]) => kept.get(value) !== kind).map(([value]) => value),
        );
        identifiers = added.map((x) => x.value);
        await repo.insertIdentifiers(trx, orgId, id, added);
        if (!sameIndexed(client, current.scim, write.scim)) {
          await repo.replaceExtensionValues(
            trx,
            orgId,
            id,
            client.indexedAttributes.map((a) => a.key),
            extensionValuesOf(write.scim, client.indexedAttributes),
          );
        }
        await this.#record(trx, client, "user.updated", id, write.scim);
        return toStoredUser(row, view.groups ? (row.groups ?? []) : undefined);
      });
    } catch (e) {
      if (isUniqueViolation(e, repo.EXTENSION_UNIQUE_KEY)) throw new ExtensionConflictError();
      if (!isUniqueViolation(e, repo.IDENTIFIERS_KEY)) throw e;
      throw conflictOf(orgId, id, await repo.identifierOwners(this.#db, identifiers));
    }
  }

  /**
   * Deletes the identity, its identifiers, credential and memberships (FK cascades); spec 3. Each group it was a
   * direct member of gets a group.user_removed (keyed by the group), recorded before the user.deleted.
   */
  async delete(orgId: string, client: ScimClient, id: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
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
      await this.#events.record(trx, client, [
        ...removed,
        { kind: "user.deleted", resourceId: id, data: userEventData({ id, ...visibleTo(client, deleted.scim) }) },
      ]);
      return true;
    });
  }

  async list(
    orgId: string,
    filter: UserFilter | undefined,
    page: UserPage,
    view: ReadView,
  ): Promise<{ rows: StoredUser[]; total?: number }> {
    const { rows, total } = await repo.listUsers(this.#reads, orgId, filter, page, view.groups);
    const users = rows.map((r) => toStoredUser(r, view.groups ? (r.groups ?? []) : undefined));
    return total === undefined ? { rows: users } : { rows: users, total };
  }

  /** Admin API: identities of one organization (or all), keyset-paged by id. */
  async listIdentities(orgId: string | undefined, after: string | undefined, limit: number): Promise<Identity[]> {
    return (await repo.listIdentities(this.#db, orgId, after, limit)).map(toIdentity);
  }

  async getIdentity(id: string): Promise<Identity | undefined> {
    const row = await repo.getIdentity(this.#db, id);
    return row === undefined ? undefined : toIdentity(row);
  }

  /**
   * Issue 3 point 6: the password must match an active identity. Unknown identifiers and identities without a
   * password verify against a dummy hash, so every answer costs one argon2 verification.
   */
  async verifyPassword(identifier: string, password: string): Promise<VerifyResult> {
    const row = await repo.credentialOf(this.#db, identifierKey(identifier));
    const matches =
      row === undefined || row.password_hash === null
        ? await burnVerification(password)
        : await verifyPassword(row.password_hash, password);
    if (!matches || row === undefined) return { ok: false, reason: "mismatch" };
    // Spec 3: an inactive user cannot log in.
    if (!row.active) return { ok: false, reason: "inactive" };
    return { ok: true, identity: toIdentity(row) };
  }

  async #record(
    trx: Parameters<EventSink["record"]>[0],
    client: ScimClient,
    kind: DirectoryEvent["kind"],
    id: string,
    scim: UserDocument,
  ): Promise<void> {
    await this.#events.record(trx, client, [this.#event(client, kind, id, scim)]);
  }

  /** A webhook's `raw` is the user as the client sees it (another client's extensions left out). */
  #event(client: ScimClient, kind: DirectoryEvent["kind"], id: string, scim: UserDocument): DirectoryEvent {
    return { kind, resourceId: id, data: userEventData({ id, ...visibleTo(client, scim) }) };
  }
}

/** Whether two documents have the same values in the client's extension index (always, for most clients). */
function sameIndexed(client: ScimClient, a: UserDocument, b: UserDocument): boolean {
  if (client.indexedAttributes.length === 0) return true;
  return sameExtensionValues(
    extensionValuesOf(a, client.indexedAttributes),
    extensionValuesOf(b, client.indexedAttributes),
  );
}

/** Whether two documents have the same identifiers (values and kinds): a write that keeps them leaves their rows. */
function sameIdentifiers(a: UserDocument, b: UserDocument): boolean {
  const before = identifiersOf(a);
  const after = identifiersOf(b);
  return (
    before.length === after.length && before.every((x, i) => x.value === after[i]?.value && x.kind === after[i]?.kind)
  );
}

/** Issue 3 point 5: the identity of this organization that holds the userName, else the primary email. */
function linkTarget(orgId: string, doc: UserDocument, owners: readonly repo.IdentifierOwner[]): string | undefined {
  const userName = typeof doc.userName === "string" ? identifierKey(doc.userName) : undefined;
  const email = primaryEmail(doc);
  for (const wanted of [userName, email === undefined ? undefined : identifierKey(email)]) {
    const owner = owners.find((o) => o.value === wanted && o.organization_id === orgId);
    if (owner !== undefined) return owner.identity_id;
  }
  return undefined;
}

function conflictOf(
  orgId: string,
  self: string | undefined,
  owners: readonly repo.IdentifierOwner[],
): IdentityConflictError {
  const others = owners.filter((o) => o.identity_id !== self);
  const foreign = others.length > 0 && others.every((o) => o.organization_id !== orgId);
  return new IdentityConflictError(foreign ? "another" : "organization");
}

/**
 * jsonb's text of a stored document: `{"key": value, ...}`. Inside a JSON string every `"` is escaped, so this
 * pattern (an unescaped quote, the name, `": [`) can only match a key; a stored document holds registry attributes
 * only (validateUser), none with a sub-attribute named `schemas`.
 */
const SCHEMAS = '"schemas": [';
const SCHEMA_LIST = /^\["[^"\\\]]*"(, "[^"\\\]]*")*\]$/;

/** The document's `schemas` array and the document without it, or undefined when it is not the plain shape. */
function splitSchemas(text: string): { schemas: string; body: string } | undefined {
  const at = text.indexOf(SCHEMAS);
  const end = at < 0 ? -1 : text.indexOf("]", at);
  if (end < 0) return undefined;
  const schemas = text.slice(at + SCHEMAS.length - 1, end + 1);
  if (!SCHEMA_LIST.test(schemas)) return undefined;
  let before = text.slice(0, at);
  let after = text.slice(end + 1);
  if (after.startsWith(", ")) after = after.slice(2);
  else if (before.endsWith(", ")) before = before.slice(0, -2);
  return { schemas, body: before + after };
}

function fromTextRow(orgId: string, row: repo.UserTextRow, plain: PlainSchemas): UserText | StoredUser {
  const groups = row.groups;
  const created = repo.isoFromUtcText(row.created);
  const lastModified = repo.isoFromUtcText(row.updated);
  const split = row.manager_display_name === null && !row.owned ? splitSchemas(row.scim) : undefined;
  if (split === undefined || !plain(split.schemas)) {
    return {
      id: row.id,
      organizationId: orgId,
      scim: JSON.parse(row.scim) as Record<string, unknown>,
      createdAt: new Date(created),
      updatedAt: new Date(lastModified),
      groups: JSON.parse(groups) as GroupRef[],
      managerDisplayName: row.manager_display_name,
    };
  }
  return {
    id: row.id,
    schemas: split.schemas,
    body: split.body,
    created,
    lastModified,
    groups: groups === "[]" ? undefined : groups,
  };
}

function toStoredUser(row: repo.UserRow, groups: StoredUser["groups"]): StoredUser {
  return {
    id: row.id,
    organizationId: row.organization_id,
    scim: row.scim,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    groups,
    managerDisplayName: row.manager_display_name,
  };
}

function toIdentity(row: repo.IdentityRow): Identity {
  return {
    id: row.id,
    organizationId: row.organization_id,
    active: row.active,
    userName: row.user_name,
    traits: row.traits,
    scim: row.scim,
    hasPassword: row.has_password,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
