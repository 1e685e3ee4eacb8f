import type { Db } from "../../storage/database.js";
import { isUniqueViolation } from "../../storage/errors.js";
import type { EventSink, OutboxBatch } from "../events.js";
import { type RecordEvents, transactionWithEvents } from "../events-repo.js";
import type { SearchSpec } from "../search/types.js";
import type { Identifier } from "./document.js";
import type { ExtensionValue } from "./extension-values.js";
import * as repo from "./repo.js";
import { toStoredUser } from "./repo-columns.js";
import { deleteIdentifiers, type IdentifierOwner, identifierOwners, insertIdentifiers } from "./repo-index.js";
import * as reads from "./repo-reads.js";
import { searchUsers } from "./repo-search.js";
import type { Identity, StoredUser, UserDocument, UserPage } from "./types.js";

export type { IdentityValues } from "./repo.js";
type NewIdentity = Parameters<typeof repo.createUser>[1];
type Values = repo.IdentityValues & { now: Date };

/** A user read under its row lock, with what only a write may see. */
export interface LockedUser extends StoredUser {
  readonly passwordHash: string | null;
}

/** Which unique rule a failed write broke: a taken identifier, a taken unique extension value, or neither. */
export type UniqueClash = "identifier" | "extension" | undefined;

/**
 * The statements of one transaction, as plain calls: a service says what it does and this object runs it in the
 * transaction IdentityStore.transaction opened. `record` writes events in the same transaction.
 */
export interface UserUnitOfWork {
  /** The row a replace or patch starts from, locked until the transaction ends (no lost updates). */
  lock(orgId: string, id: string, groups: boolean): Promise<LockedUser | undefined>;
  /** A write of the locked row; the password hash changes only when given. */
  update(orgId: string, id: string, values: Values & { password_hash?: string }, groups: boolean): Promise<StoredUser>;
  /** Moves the identifier index from `removed` values to `added` ones. */
  replaceIdentifiers(
    orgId: string,
    id: string,
    removed: readonly string[],
    added: readonly Identifier[],
  ): Promise<void>;
  replaceExtensionValues(
    orgId: string,
    id: string,
    keys: readonly string[],
    values: readonly ExtensionValue[],
  ): Promise<void>;
  /** See repo.touchGroupsOf: the groups the user leaves, marked modified, in id order. */
  touchGroupsOf(orgId: string, id: string, now: Date): ReturnType<typeof repo.touchGroupsOf>;
  delete(
    orgId: string,
    id: string,
    expected?: readonly string[],
  ): Promise<{ id: string; scim: UserDocument } | undefined>;
  versionOf(orgId: string, id: string): Promise<string | undefined>;
  clearManager(orgId: string, managerId: string, now: Date): Promise<{ id: string; scim: UserDocument }[]>;
  readonly record: RecordEvents;
}

/**
 * The storage of identities: every read and write a service of identities makes, transactions included. The
 * services never see a connection or a transaction: a single-statement write is one method, a locked one a
 * `transaction` whose work gets a UserUnitOfWork.
 */
export class IdentityStore {
  readonly #db: Db;
  /** For GET and list: the pool with generic plans (storage/open.ts), or db. */
  readonly #reads: Db;

  constructor(db: Db, reads: Db = db) {
    this.#db = db;
    this.#reads = reads;
  }

  /** Runs `work` in one transaction; its recorded events are announced to `events` once it committed. */
  transaction<T>(events: EventSink, work: (uow: UserUnitOfWork) => Promise<T>): Promise<T> {
    return transactionWithEvents(this.#db, events, (trx, record) =>
      work({
        async lock(orgId, id, groups) {
          const row = await repo.lockUser(trx, orgId, id, groups);
          return row === undefined ? undefined : { ...toStoredUser(row), passwordHash: row.password_hash };
        },
        update: async (orgId, id, values, groups) =>
          toStoredUser(await repo.updateUser(trx, orgId, id, values, groups)),
        async replaceIdentifiers(orgId, id, removed, added) {
          await deleteIdentifiers(trx, id, removed);
          await insertIdentifiers(trx, orgId, id, added);
        },
        replaceExtensionValues: (orgId, id, keys, values) => repo.replaceExtensionValues(trx, orgId, id, keys, values),
        touchGroupsOf: (orgId, id, now) => repo.touchGroupsOf(trx, orgId, id, now),
        delete: (orgId, id, expected) => repo.deleteUser(trx, orgId, id, expected),
        versionOf: (orgId, id) => repo.versionOf(trx, orgId, id),
        clearManager: (orgId, managerId, now) => repo.clearManager(trx, orgId, managerId, now),
        record,
      }),
    );
  }

  /** A new identity with its identifiers, extension index rows and events, in one statement (`flowed`: see updateAt). */
  async create(
    row: NewIdentity,
    identifiers: readonly Identifier[],
    events: OutboxBatch,
    extensionValues: readonly ExtensionValue[],
  ): Promise<StoredUser & { readonly flowed: boolean }> {
    const created = await repo.createUser(this.#db, row, identifiers, events, extensionValues);
    return { ...toStoredUser(created), flowed: created.flowed };
  }

  /**
   * The optimistic update of repo.updateUserAt: undefined when the row is no longer at `version`. `flowed`: whether
   * the write's events are known to have flowed (not held).
   */
  async updateAt(
    orgId: string,
    id: string,
    version: string,
    values: Values,
    groups: boolean,
    events: OutboxBatch | undefined,
    wasActive?: boolean,
    unheld?: boolean,
  ): Promise<(StoredUser & { readonly flowed: boolean }) | undefined> {
    const row = await repo.updateUserAt(this.#db, orgId, id, version, values, groups, events, wasActive, unheld);
    return row === undefined ? undefined : { ...toStoredUser(row), flowed: row.flowed };
  }

  /** The row a write starts from, read without a lock on the primary. */
  async read(orgId: string, id: string, groups: boolean): Promise<StoredUser | undefined> {
    const row = await repo.readUser(this.#db, orgId, id, groups);
    return row === undefined ? undefined : toStoredUser(row);
  }

  /** GET /Users/{id}. */
  async find(orgId: string, id: string, groups: boolean): Promise<StoredUser | undefined> {
    const row = await reads.findUser(this.#reads, orgId, id, groups);
    return row === undefined ? undefined : toStoredUser(row);
  }

  /** One list page; a filter the store cannot answer throws UnsupportedFilterError. */
  async search(
    orgId: string,
    spec: SearchSpec,
    page: UserPage,
    groups: boolean,
  ): Promise<{ rows: StoredUser[]; total?: number; sortValues?: (string | null)[] }> {
    const { rows, ...rest } = await searchUsers(this.#reads, this.#db, orgId, spec, page, groups);
    return { rows: rows.map(toStoredUser), ...rest };
  }

  /** Which unique rule `e` broke, if it is a unique violation of the identities' tables. */
  uniqueClash(e: unknown): UniqueClash {
    if (isUniqueViolation(e, repo.IDENTIFIERS_KEY)) return "identifier";
    if (isUniqueViolation(e, repo.EXTENSION_UNIQUE_KEY)) return "extension";
    return undefined;
  }

  /** Who holds these identifiers now (after a unique violation, to say where the clash is). */
  identifierOwners(values: readonly string[]): Promise<IdentifierOwner[]> {
    return identifierOwners(this.#db, values);
  }

  /** The identity an identifier key names, with its password hash: for verification only. */
  async credentialOf(identifier: string): Promise<{ identity: Identity; passwordHash: string | null } | undefined> {
    const row = await reads.credentialOf(this.#db, identifier);
    return row === undefined ? undefined : { identity: toIdentity(row), passwordHash: row.password_hash };
  }

  /** Identities of one organization (or all), keyset-paged by id. */
  async listIdentities(orgId: string | undefined, after: string | undefined, limit: number): Promise<Identity[]> {
    return (await reads.listIdentities(this.#db, orgId, after, limit)).map(toIdentity);
  }

  async getIdentity(id: string): Promise<Identity | undefined> {
    const row = await reads.getIdentity(this.#db, id);
    return row === undefined ? undefined : toIdentity(row);
  }
}

function toIdentity(row: reads.IdentityRow): Identity {
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
