import { type Selectable, sql } from "kysely";
import type { Db } from "../storage/database.js";
import type { OutboxBatch } from "../storage/event-port.js";
import { writeEvents } from "../storage/event-store.js";
import { isForeignKeyViolation } from "../storage/errors.js";
import type { ApiKeysTable } from "../storage/schema.js";
import { organizationNotFound } from "./errors.js";
import { type ApiKey, type ApiKeyFields, type ApiKeyKind, REVOKED_BY_ADMIN } from "./model.js";
import type { CounterReading } from "./rate-limit.js";

export interface ListFilter {
  readonly organizationId: string | undefined;
  readonly actorId: string | undefined;
  readonly showRevoked: boolean;
}

export interface ImportRow {
  readonly keyId: string;
  readonly digest: Buffer;
  readonly organizationId: string | null;
  readonly fields: ApiKeyFields;
}

export interface DigestMatch {
  readonly key: ApiKey;
  /** When rotation superseded this secret: it verifies until then. */
  readonly secretExpireTime: Date | null;
}

/** Kysely only: the storage of keys, their digests and rate-limit counters. */
export class ApiKeyRepo {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  transaction<T>(work: (repo: ApiKeyRepo) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute((tx) => work(new ApiKeyRepo(tx)));
  }

  async insertIssued(
    keyId: string,
    organizationId: string | null,
    fields: ApiKeyFields,
    prefix: string,
    digest: Buffer,
    now: Date,
  ): Promise<ApiKey> {
    try {
      await this.#db
        .insertInto("api_keys")
        .values({
          key_id: keyId,
          kind: "issued",
          organization_id: organizationId,
          prefix,
          ...columnsOf(fields),
          create_time: now,
          update_time: now,
        })
        .execute();
    } catch (e) {
      // The organization was deleted after the service checked it.
      if (isForeignKeyViolation(e, "api_keys_organization_fkey")) throw organizationNotFound(organizationId);
      throw e;
    }
    await this.#db
      .insertInto("api_key_secrets")
      .values({ digest, key_id: keyId, expire_time: null, create_time: now })
      .execute();
    return this.#reread(keyId);
  }

  async get(kind: ApiKeyKind, keyId: string, forUpdate = false): Promise<ApiKey | undefined> {
    let q = this.#keys().where("k.key_id", "=", keyId).where("k.kind", "=", kind);
    // Locks the key row only: the identity's row may change meanwhile, and is read again on every verification.
    if (forUpdate) q = q.forUpdate("k");
    const row = await q.executeTakeFirst();
    return row === undefined ? undefined : toApiKey(row);
  }

  /** Keyset page in key_id order (UUIDv7: creation order); `limit` rows at most. */
  async list(kind: ApiKeyKind, filter: ListFilter, after: string | undefined, limit: number): Promise<ApiKey[]> {
    let q = this.#keys().where("k.kind", "=", kind).orderBy("k.key_id").limit(limit);
    if (filter.organizationId !== undefined) q = q.where("k.organization_id", "=", filter.organizationId);
    if (filter.actorId !== undefined) q = q.where("k.actor_id", "=", filter.actorId);
    if (!filter.showRevoked) q = q.where("k.revoke_time", "is", null);
    if (after !== undefined) q = q.where("k.key_id", ">", after);
    return (await q.execute()).map(toApiKey);
  }

  async update(keyId: string, fields: ApiKeyFields, now: Date): Promise<ApiKey> {
    await this.#db
      .updateTable("api_keys")
      .set({ ...columnsOf(fields), update_time: now })
      .where("key_id", "=", keyId)
      .execute();
    return this.#reread(keyId);
  }

  /**
   * Revokes the key unless it already is, and writes the events `eventsOf` makes of a key of an organization so
   * revoked, in one transaction; the batch is returned to be announced once committed.
   */
  async revoke(kind: ApiKeyKind, keyId: string, now: Date, eventsOf: (organizationId: string) => OutboxBatch) {
    return this.#db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable("api_keys")
        .set({ revoke_time: now, revoke_reason: REVOKED_BY_ADMIN, update_time: now })
        .where("key_id", "=", keyId)
        .where("kind", "=", kind)
        .where("revoke_time", "is", null)
        .returning("organization_id")
        .executeTakeFirst();
      const batch = revoked?.organization_id ? eventsOf(revoked.organization_id) : undefined;
      if (batch !== undefined) await writeEvents(trx, batch);
      return { key: await new ApiKeyRepo(trx).get(kind, keyId), batch };
    });
  }

  /**
   * Replaces the current secret: secrets past their grace are dropped, live ones expire at `graceUntil`
   * (never later than they already would), or are dropped at once when there is no grace.
   */
  async replaceSecret(
    keyId: string,
    prefix: string,
    digest: Buffer,
    now: Date,
    graceUntil: Date | undefined,
  ): Promise<ApiKey> {
    if (graceUntil === undefined) {
      await this.#db.deleteFrom("api_key_secrets").where("key_id", "=", keyId).execute();
    } else {
      await this.#db
        .deleteFrom("api_key_secrets")
        .where("key_id", "=", keyId)
        .where("expire_time", "<=", now)
        .execute();
      await this.#db
        .updateTable("api_key_secrets")
        .set({ expire_time: sql<Date>`least(coalesce(expire_time, 'infinity'::timestamptz), ${graceUntil})` })
        .where("key_id", "=", keyId)
        .execute();
    }
    await this.#db
      .insertInto("api_key_secrets")
      .values({ digest, key_id: keyId, expire_time: null, create_time: now })
      .execute();
    await this.#db.updateTable("api_keys").set({ prefix, update_time: now }).where("key_id", "=", keyId).execute();
    return this.#reread(keyId);
  }

  /**
   * Set-based: one statement inserts every digest that is new (`on conflict do nothing`) and the key
   * rows of exactly those, returning them. Items absent from the result met an existing digest.
   */
  async insertImported(rows: readonly ImportRow[], now: Date): Promise<ApiKey[]> {
    if (rows.length === 0) return [];
    const col = <T>(f: (r: ImportRow) => T): T[] => rows.map(f);
    const result = await sql<{ key_id: string }>`
      with input as (
        select * from unnest(
          ${col((r) => r.keyId)}::uuid[],
          ${col((r) => r.digest.toString("hex"))}::text[],
          ${col((r) => r.organizationId)}::uuid[],
          ${col((r) => r.fields.name)}::text[],
          ${col((r) => r.fields.actorId)}::text[],
          ${col((r) => JSON.stringify(r.fields.scopes))}::jsonb[],
          ${col((r) => JSON.stringify(r.fields.metadata))}::jsonb[],
          ${col((r) => JSON.stringify(rateLimitColumn(r.fields)))}::jsonb[],
          ${col((r) => r.fields.expireTime?.toISOString() ?? null)}::timestamptz[]
        ) as t(key_id, digest_hex, organization_id, name, actor_id, scopes, metadata, rate_limits, expire_time)
      ),
      secrets as (
        insert into api_key_secrets (digest, key_id, expire_time, create_time)
        select decode(digest_hex, 'hex'), key_id, null, ${now} from input
        on conflict (digest) do nothing
        returning key_id
      )
      insert into api_keys (key_id, kind, organization_id, name, actor_id, prefix, scopes, metadata, rate_limits,
        expire_time, revoke_time, create_time, update_time)
      select i.key_id, 'imported', i.organization_id, i.name, i.actor_id, null, i.scopes, i.metadata, i.rate_limits,
        i.expire_time, null, ${now}, ${now}
      from input i join secrets s on s.key_id = i.key_id
      returning key_id
    `.execute(this.#db);
    if (result.rows.length === 0) return [];
    const created = await this.#keys()
      .where(
        "k.key_id",
        "in",
        result.rows.map((r) => r.key_id),
      )
      .execute();
    return created.map(toApiKey);
  }

  /** The verification hot path: primary-key probes only (secret digest → key → identity → organization). */
  async findByDigest(digest: Buffer): Promise<DigestMatch | undefined> {
    const row = await this.#keys()
      .innerJoin("api_key_secrets as s", "s.key_id", "k.key_id")
      .select("s.expire_time as secret_expire_time")
      .where("s.digest", "=", digest)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const { secret_expire_time, ...key } = row;
    return { key: toApiKey(key), secretExpireTime: secret_expire_time };
  }

  /**
   * Counts one verification against each window, atomically (`insert … on conflict do update … returning`): the
   * row lock orders concurrent verifications from any instance, so each sees a distinct count. A newer window
   * restarts the count; an older one (a lagging clock elsewhere) counts into the newer. The statement's own
   * transaction commits without waiting for the WAL flush (synchronous_commit off, local to it): a database crash
   * may forget the last few counts, which is an acceptable under-count for a rate limit and saves a disk flush
   * per verification.
   */
  async count(keyId: string, windows: readonly { name: string; windowStart: Date }[]): Promise<CounterReading[]> {
    if (windows.length === 0) return [];
    const result = await sql<{ limit_name: string; window_start: Date; count: number }>`
      insert into api_key_rate_counters as c (key_id, limit_name, window_start, count)
      select ${keyId}::uuid, n, w, 1
      from unnest(${windows.map((w) => w.name)}::text[], ${windows.map((w) => w.windowStart.toISOString())}::timestamptz[]) as t(n, w),
        (select set_config('synchronous_commit', 'off', true)) as async_commit
      on conflict (key_id, limit_name) do update set
        count = case when excluded.window_start > c.window_start then 1 else c.count + 1 end,
        window_start = greatest(c.window_start, excluded.window_start)
      returning limit_name, window_start, count
    `.execute(this.#db);
    return result.rows.map((r) => ({ name: r.limit_name, windowStart: r.window_start, count: r.count }));
  }

  async resetCounters(keyId: string): Promise<void> {
    await this.#db.deleteFrom("api_key_rate_counters").where("key_id", "=", keyId).execute();
  }

  async existingOrganizations(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.#db
      .selectFrom("organizations")
      .select("id")
      .where("id", "in", [...ids])
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Keys with `actor_inactive` read from their identity (docs/security.md): inactive while its organization lets keys
   * follow identities and no deprovisioning guard holds its deactivation (docs/deprovisioning.md).
   */
  #keys() {
    return this.#db
      .selectFrom("api_keys as k")
      .leftJoin("identities as i", (j) =>
        j.onRef("i.id", "=", "k.actor_identity_id").onRef("i.organization_id", "=", "k.organization_id"),
      )
      .leftJoin("organizations as o", "o.id", "k.organization_id")
      .selectAll("k")
      .select(ACTOR_INACTIVE.as("actor_inactive"));
  }

  async #reread(keyId: string): Promise<ApiKey> {
    return toApiKey(await this.#keys().where("k.key_id", "=", keyId).executeTakeFirstOrThrow());
  }
}

const ACTOR_INACTIVE = sql<boolean>`coalesce(o.keys_follow_identity and not i.active
  and not exists (select 1 from held_events h where h.ordering_key = i.id::text), false)`;
const rateLimitColumn = (fields: ApiKeyFields) =>
  fields.rateLimits.map((r) => ({ name: r.name, limit: r.limit, period_seconds: r.periodSeconds }));

function columnsOf(fields: ApiKeyFields) {
  return {
    name: fields.name,
    actor_id: fields.actorId,
    scopes: JSON.stringify(fields.scopes),
    metadata: JSON.stringify(fields.metadata),
    rate_limits: JSON.stringify(rateLimitColumn(fields)),
    expire_time: fields.expireTime,
  };
}

export const toApiKey = (row: Selectable<ApiKeysTable> & { actor_inactive: boolean }): ApiKey => ({
  keyId: row.key_id,
  kind: row.kind,
  organizationId: row.organization_id,
  name: row.name,
  actorId: row.actor_id,
  prefix: row.prefix,
  scopes: row.scopes,
  metadata: row.metadata,
  rateLimits: row.rate_limits.map((r) => ({ name: r.name, limit: r.limit, periodSeconds: r.period_seconds })),
  expireTime: row.expire_time,
  revokeTime: row.revoke_time,
  revokeReason: row.revoke_reason,
  actorInactive: row.actor_inactive,
  createTime: row.create_time,
  updateTime: row.update_time,
});
