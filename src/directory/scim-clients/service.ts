import type { Clock } from "../../platform/clock.js";
import { constantTimeEqualBytes, hashSecret, type SecretBox, verifySecret } from "../../platform/crypto.js";
import type { EventSink } from "../events.js";
import { ScimClientCache } from "./cache.js";
import { type ConnectionEventKind, type ConnectionState, connectionEvent, connectionOrigin } from "./events.js";
import type { ScimClientRepo } from "./repo.js";
import {
  DEFAULT_AUTH_METHODS,
  type ScimClient,
  type ScimClientChanges,
  type ScimClientInput,
  type StoredScimClientChanges,
} from "./types.js";

/** The longest grace period of a secret rotation: an IdP's secret can be updated within a week. */
export const MAX_SECRET_GRACE_SECONDS = 7 * 86_400;
/** The previous secret's last use is written at most this often per client and instance. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * SCIM clients: their secrets (hashed; rotated with a grace period), their sealed webhook secrets, and the cache
 * SCIM authentication reads through. Every change forgets the cached client on this instance.
 */
export class ScimClientService {
  readonly #repo: ScimClientRepo;
  readonly #clock: Clock;
  readonly #box: SecretBox;
  readonly #cache: ScimClientCache;
  readonly #events: EventSink;
  /** Clients this instance has seen active: their further successes cost nothing. */
  readonly #active = new Set<string>();
  /** Per client: when this instance last wrote previous_secret_last_used_time (bounds writes on the hot path). */
  readonly #previousUseWritten = new Map<string, number>();
  constructor(repo: ScimClientRepo, clock: Clock, box: SecretBox, events: EventSink) {
    this.#repo = repo;
    this.#events = events;
    this.#clock = clock;
    this.#box = box;
    this.#cache = new ScimClientCache((id) => this.get(id), clock);
  }

  /** The read-through lookup of the SCIM hot path (a few seconds of staleness across instances). */
  get cached(): ScimClientCache {
    return this.#cache;
  }

  /** What SCIM authentication needs: the cached and the fresh client, the secret check, the use record. */
  get authenticator() {
    return {
      get: (clientId: string) => this.#cache.get(clientId),
      peek: (clientId: string) => this.#cache.peek(clientId),
      refresh: (clientId: string) => this.#cache.refresh(clientId),
      match: (client: ScimClient, presented: string) => matchSecret(client, presented, this.#clock.now()),
      notePreviousSecretUse: (client: ScimClient) => this.notePreviousSecretUse(client),
      noteSuccess: (client: ScimClient) => this.noteSuccess(client),
    };
  }

  /** The new client; a taken client id (ClientIdTakenError) or a missing organization (OrganizationNotFoundError) is refused. */
  async create(input: ScimClientInput): Promise<ScimClient> {
    const webhookSecret = input.webhook?.secret ?? null;
    const stored = await this.#repo.insert(
      {
        clientId: input.clientId,
        organizationId: input.organizationId,
        name: input.name,
        secretHash: hashSecret(input.secret),
        autoLink: input.autoLink,
        mapping: input.mapping,
        tenant: input.tenant,
        product: input.product,
        webhookUrl: input.webhook?.url ?? null,
        webhookSecretSealed: webhookSecret === null ? null : this.#box.seal(webhookSecret),
        logWebhookEvents: input.logWebhookEvents,
        requestLog: input.requestLog ?? "errors",
        extensions: input.extensions ?? [],
        unknownExtensions: input.unknownExtensions ?? "reject",
        webhookRetry: input.webhookRetry ?? "none",
        authMethods: input.authMethods ?? DEFAULT_AUTH_METHODS,
        spcPagination: input.spcPagination ?? true,
        groupPatchResponse: input.groupPatchResponse ?? "no_content",
        now: this.#clock.now(),
        ...(input.setupLinkId === undefined ? {} : { setupLinkId: input.setupLinkId }),
      },
      (client) => this.#connectionBatch("connection.created", client, "inactive"),
    );
    this.#events.committed(stored.batch);
    return stored.client;
  }

  get(clientId: string): Promise<ScimClient | undefined> {
    return this.#repo.get(clientId);
  }

  /** A page of at most `limit` clients, and past the first no more than `maxBytes` (see ScimClientRepo.list). */
  list(
    organizationId: string | undefined,
    after: string | undefined,
    limit: number,
    maxBytes: number,
  ): Promise<{ clients: ScimClient[]; more: boolean }> {
    return this.#repo.list(organizationId, after, limit, maxBytes);
  }

  async update(clientId: string, changes: ScimClientChanges): Promise<ScimClient | undefined> {
    const { secret, webhookSecret, ...rest } = changes;
    const stored: StoredScimClientChanges = {
      ...rest,
      ...(secret === undefined ? {} : { secretHash: hashSecret(secret) }),
      ...(webhookSecret === undefined
        ? {}
        : { webhookSecretSealed: webhookSecret === null ? null : this.#box.seal(webhookSecret) }),
    };
    this.#cache.forget(clientId);
    const client = await this.#repo.update(clientId, stored, this.#clock.now());
    // Forget again: a request may have re-read the old row while this update was in flight.
    this.#cache.forget(clientId);
    return client;
  }

  /**
   * Replaces the secret. With a grace period the replaced one keeps authenticating until `now + graceSeconds`;
   * an older previous secret (from an earlier rotation) stops at once: at most two secrets are ever live.
   */
  async rotateSecret(clientId: string, newSecret: string, graceSeconds: number): Promise<ScimClient | undefined> {
    const now = this.#clock.now();
    const graceUntil = graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null;
    this.#cache.forget(clientId);
    const client = await this.#repo.replaceSecret(clientId, hashSecret(newSecret), now, graceUntil);
    this.#cache.forget(clientId);
    this.#previousUseWritten.delete(clientId);
    return client;
  }

  /** Records that the previous secret authenticated a request, so an operator sees when the IdP switched. */
  async notePreviousSecretUse(client: ScimClient): Promise<void> {
    const now = this.#clock.now();
    const written = this.#previousUseWritten.get(client.clientId);
    if (written !== undefined && now.getTime() - written < LAST_USED_RESOLUTION_MS) return;
    if (this.#previousUseWritten.size >= 10_000) this.#previousUseWritten.clear();
    this.#previousUseWritten.set(client.clientId, now.getTime());
    await this.#repo.notePreviousSecretUse(client.clientId, client.previousSecretHash, now);
  }

  async delete(clientId: string): Promise<boolean> {
    this.#cache.forget(clientId);
    const batch = await this.#repo.delete(clientId, (client) =>
      this.#connectionBatch("connection.deleted", client, "deleted"),
    );
    this.#cache.forget(clientId);
    this.#active.delete(clientId);
    if (batch === undefined) return false;
    this.#events.committed(batch);
    return true;
  }

  /**
   * Called after each successful SCIM request: the first one of a connection marks it active and announces
   * `connection.activated`. After that (on this instance, or once the cached client shows it) it costs nothing.
   */
  async noteSuccess(client: ScimClient): Promise<void> {
    if (client.activatedTime !== null || this.#active.has(client.clientId)) return;
    const batch = await this.#repo.activate(client.clientId, this.#clock.now(), (active) =>
      this.#connectionBatch("connection.activated", active, "active"),
    );
    // Only once it is recorded: a failed write (the database away) is tried again at the next success.
    if (this.#active.size >= 10_000) this.#active.clear();
    this.#active.add(client.clientId);
    if (batch !== undefined) {
      this.#cache.forget(client.clientId);
      this.#events.committed(batch);
    }
  }

  #connectionBatch(kind: ConnectionEventKind, client: ScimClient, state: ConnectionState) {
    return this.#events.batch(connectionOrigin(client, kind), [connectionEvent(kind, client, state)]);
  }

  /** The plaintext webhook secret, for signing only; never for a response or a log line. */
  openWebhookSecret(client: ScimClient): string | undefined {
    return client.webhookSecretSealed === null ? undefined : this.#box.open(client.webhookSecretSealed);
  }
}

/**
 * Per client record, the secret last presented that matched its current hash, as bytes: an IdP sends the same
 * secret with every request, and comparing the bytes in constant time costs a tenth of hashing it again (under
 * load, several microseconds a request). Kept only in this process's memory, next to the request that carried it,
 * and only for the hash it matched: a rotated secret is a new record and a new hash.
 */
const confirmed = new WeakMap<ScimClient, { readonly hash: string; readonly secret: Buffer }>();

/**
 * Which of the client's secrets `presented` is: the current one, or the previous one while its grace period
 * lasts. Both are compared in constant time, and both are always computed, so timing tells nothing about which —
 * except for the current secret confirmed before (`confirmed`), which answers at once.
 */
export function matchSecret(client: ScimClient, presented: string, now: Date): "current" | "previous" | undefined {
  const bytes = Buffer.from(presented);
  const known = confirmed.get(client);
  if (known?.hash === client.secretHash && constantTimeEqualBytes(bytes, known.secret)) return "current";
  const current = verifySecret(presented, client.secretHash);
  if (current) confirmed.set(client, { hash: client.secretHash, secret: bytes });
  const previousLive =
    client.previousSecretHash !== null &&
    client.previousSecretExpireTime !== null &&
    client.previousSecretExpireTime.getTime() > now.getTime();
  const previous = client.previousSecretHash !== null && verifySecret(presented, client.previousSecretHash);
  if (current) return "current";
  return previous && previousLive ? "previous" : undefined;
}
