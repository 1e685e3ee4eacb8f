import type { Clock } from "../platform/clock.js";
import { uuidv7 } from "../platform/ids.js";
import type { EventOrigin, EventSink } from "../directory/events.js";
import { ApiKeyError, keyNotFound, organizationNotFound } from "./errors.js";
import {
  ACTOR_INACTIVE,
  type ApiKey,
  type ApiKeyFields,
  type ApiKeyKind,
  applyChanges,
  type KeyChange,
  MAX_RAW_KEY_LENGTH,
  stateOf,
} from "./model.js";
import { evaluate, type RateLimitStatus, windowStart } from "./rate-limit.js";
import type { ApiKeyRepo, ImportRow, ListFilter } from "./repo.js";
import { digestOf, generateIssuedSecret } from "./secrets.js";

/** A key together with the secret to show this once (create, rotate). */
export interface WithSecret {
  readonly key: ApiKey;
  readonly secret: string;
  /** Rotation with a grace period: when the previous secret stops verifying. */
  readonly previousSecretExpireTime?: Date;
}

export type VerifyResult =
  | { readonly valid: true; readonly key: ApiKey; readonly rateLimit: RateLimitStatus | undefined }
  | { readonly valid: false; readonly reason: "NOT_FOUND" }
  | {
      readonly valid: false;
      readonly reason: "EXPIRED" | "REVOKED" | "ACTOR_INACTIVE" | "RATE_LIMITED";
      readonly key: ApiKey;
      readonly rateLimit: RateLimitStatus | undefined;
    };

/** One validated batch item, ready to store; the raw key is already reduced to its digest. */
export interface ImportItem {
  readonly digest: Buffer;
  readonly organizationId: string | null;
  readonly fields: ApiKeyFields;
}

export type ImportOutcome = { readonly key: ApiKey } | { readonly error: { code: string; message: string } };

/**
 * Where an admin's revocation of a key of an organization is announced: the organization's feed, as the admin API's
 * doing; it concerns no connection, so no connection's webhook carries it (docs/events.md).
 */
const ADMIN_ORIGIN = (organizationId: string): EventOrigin => ({
  organizationId,
  clientId: null,
  tenant: "",
  product: "",
  webhookUrl: null,
  source: "admin",
});

/** Issued and imported API keys: create, change, rotate, revoke, import and verify (docs/api-keys.md). */
export class ApiKeyService {
  readonly #repo: ApiKeyRepo;
  readonly #clock: Clock;
  readonly #events: EventSink;
  constructor(repo: ApiKeyRepo, clock: Clock, events: EventSink) {
    this.#repo = repo;
    this.#clock = clock;
    this.#events = events;
  }

  async createIssued(organizationId: string | null, fields: ApiKeyFields): Promise<WithSecret> {
    if (organizationId !== null) await this.#requireOrganization(organizationId);
    const now = this.#clock.now();
    const { secret, prefix, digest } = generateIssuedSecret();
    const key = await this.#repo.transaction((repo) =>
      repo.insertIssued(uuidv7(now.getTime()), organizationId, fields, prefix, digest, now),
    );
    return { key, secret };
  }

  async get(kind: ApiKeyKind, keyId: string): Promise<ApiKey> {
    const key = await this.#repo.get(kind, keyId);
    if (key === undefined) throw missing(kind, keyId);
    return key;
  }

  list(kind: ApiKeyKind, filter: ListFilter, after: string | undefined, limit: number): Promise<ApiKey[]> {
    return this.#repo.list(kind, filter, after, limit);
  }

  /** Changes fields without touching the secret. A revoked key cannot change. */
  async update(keyId: string, changes: readonly KeyChange[]): Promise<ApiKey> {
    return this.#repo.transaction(async (repo) => {
      const key = await repo.get("issued", keyId, true);
      if (key === undefined) throw missing("issued", keyId);
      if (key.revokeTime !== null) throw revoked(keyId);
      const next = applyChanges(key, changes);
      // New limits start from fresh windows.
      if (changes.some((c) => c.field === "rate_limits")) await repo.resetCounters(keyId);
      return repo.update(keyId, next, this.#clock.now());
    });
  }

  /** A new secret; the previous one verifies until `now + graceSeconds` (0: never again). */
  async rotate(keyId: string, graceSeconds: number): Promise<WithSecret> {
    const now = this.#clock.now();
    const graceUntil = graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : undefined;
    const { secret, prefix, digest } = generateIssuedSecret();
    const key = await this.#repo.transaction(async (repo) => {
      const current = await repo.get("issued", keyId, true);
      if (current === undefined) throw missing("issued", keyId);
      if (current.revokeTime !== null) throw revoked(keyId);
      return repo.replaceSecret(keyId, prefix, digest, now, graceUntil);
    });
    return { key, secret, ...(graceUntil === undefined ? {} : { previousSecretExpireTime: graceUntil }) };
  }

  /**
   * DELETE revokes: the key stays readable with its revoke_time (AIP-164 soft delete) so verification can say
   * REVOKED rather than NOT_FOUND. Revoking a revoked key changes nothing.
   */
  async revoke(kind: ApiKeyKind, keyId: string): Promise<ApiKey> {
    const { key, batch } = await this.#repo.revoke(kind, keyId, this.#clock.now(), (organizationId) =>
      this.#events.batch(ADMIN_ORIGIN(organizationId), [{ kind: "api_key.revoked", keyId }]),
    );
    if (batch !== undefined) this.#events.committed(batch);
    if (key === undefined) throw missing(kind, keyId);
    return key;
  }

  /**
   * Stores every item whose digest is new, in one statement; results come back in request order.
   * `items[i]` is either a validated item or the error that item already has (validation, repeat in the batch).
   */
  async importBatch(
    items: readonly (ImportItem | { error: { code: string; message: string } })[],
  ): Promise<ImportOutcome[]> {
    const orgIds = new Set<string>();
    for (const item of items) if ("digest" in item && item.organizationId !== null) orgIds.add(item.organizationId);
    const existing = await this.#repo.existingOrganizations([...orgIds]);
    const now = this.#clock.now();
    const outcomes: (ImportOutcome | undefined)[] = [];
    const rows: (ImportRow & { index: number })[] = [];
    items.forEach((item, index) => {
      if (!("digest" in item)) {
        outcomes[index] = item;
      } else if (item.organizationId !== null && !existing.has(item.organizationId)) {
        outcomes[index] = {
          error: { code: "INVALID_ARGUMENT", message: `organization ${item.organizationId} does not exist` },
        };
      } else {
        rows.push({ index, keyId: uuidv7(now.getTime()), ...item });
      }
    });
    const created = new Map((await this.#repo.insertImported(rows, now)).map((k) => [k.keyId, k]));
    for (const row of rows) {
      const key = created.get(row.keyId);
      outcomes[row.index] =
        key === undefined
          ? { error: { code: "ALREADY_EXISTS", message: "raw_key was imported or issued before" } }
          : { key };
    }
    return outcomes.map((o) => o ?? { error: { code: "INTERNAL", message: "item was not processed" } });
  }

  /**
   * Lookup by digest; revoked before expired before suspended (an inactive actor identity) before rate-limited.
   * A secret superseded by rotation whose grace has ended is NOT_FOUND (it no longer belongs to any key). The
   * identity's `active` is read in the same statement as the key, so a deactivation committed before this
   * verification started is always seen, on every instance; nothing is cached.
   */
  async verify(rawKey: string): Promise<VerifyResult> {
    // No stored key is longer than an importable one: skip the lookup.
    if (rawKey.length > MAX_RAW_KEY_LENGTH) return { valid: false, reason: "NOT_FOUND" };
    const match = await this.#repo.findByDigest(digestOf(rawKey));
    const now = this.#clock.now();
    if (match === undefined) return { valid: false, reason: "NOT_FOUND" };
    if (match.secretExpireTime !== null && match.secretExpireTime.getTime() <= now.getTime()) {
      return { valid: false, reason: "NOT_FOUND" };
    }
    const { key } = match;
    const state = stateOf(key, now);
    if (state === "SUSPENDED") return { valid: false, reason: ACTOR_INACTIVE, key, rateLimit: undefined };
    if (state !== "ACTIVE") return { valid: false, reason: state, key, rateLimit: undefined };
    if (key.rateLimits.length === 0) return { valid: true, key, rateLimit: undefined };
    const readings = await this.#repo.count(
      key.keyId,
      key.rateLimits.map((l) => ({ name: l.name, windowStart: windowStart(now, l.periodSeconds) })),
    );
    const outcome = evaluate(key.rateLimits, readings);
    if (outcome !== undefined && !outcome.admitted) {
      return { valid: false, reason: "RATE_LIMITED", key, rateLimit: outcome.status };
    }
    return { valid: true, key, rateLimit: outcome?.status };
  }

  async #requireOrganization(id: string): Promise<void> {
    const found = await this.#repo.existingOrganizations([id]);
    if (!found.has(id)) throw organizationNotFound(id);
  }
}

const missing = (kind: ApiKeyKind, keyId: string): ApiKeyError => keyNotFound(kind, keyId);
const revoked = (keyId: string): ApiKeyError => new ApiKeyError("keyRevoked", `issued API key ${keyId} is revoked`);
