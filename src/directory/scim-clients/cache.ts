import { LRUCache } from "lru-cache";
import type { Clock } from "../../platform/clock.js";
import type { ScimClient } from "./types.js";

/** How long another instance may keep serving a changed client (secret rotated, client deleted). */
export const CLIENT_CACHE_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;
/**
 * What the cached clients may hold in all, as estimated by `cachedBytes`: the least recently used go first, so a few
 * clients with large declarations cannot grow the process without bound (docs/scim-extensions.md "Limits").
 */
export const CLIENT_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * A cached client's share of memory: its row, its parsed declaration and what the SCIM adapter derives from it
 * (the compiled schema registry, rendering tables), counted as 8 times the declaration's JSON (bench/extension-limits.ts
 * measures 4 to 5 times once /Schemas has been answered), and its mapping's text.
 */
export const cachedBytes = (client: ScimClient): number =>
  2048 + client.extensionsBytes * 8 + (client.mapping?.length ?? 0) * 2;

interface Entry {
  readonly client: ScimClient;
  readonly expires: number;
}

/**
 * Every SCIM request authenticates its client: a short-lived read-through cache saves that query on the hot path.
 * Changes made through this instance are forgotten at once; other instances see them within the TTL, except that
 * a secret the cached client does not accept is checked against a fresh read first (`refresh`), so a new secret
 * works everywhere at once. Misses are not kept. Only the secrets' hashes are cached, never a secret.
 */
export class ScimClientCache {
  readonly #entries: LRUCache<string, Entry>;
  readonly #load: (clientId: string) => Promise<ScimClient | undefined>;
  readonly #clock: Clock;
  readonly #ttlMs: number;

  constructor(
    load: (clientId: string) => Promise<ScimClient | undefined>,
    clock: Clock,
    ttlMs = CLIENT_CACHE_TTL_MS,
    maxBytes = CLIENT_CACHE_MAX_BYTES,
  ) {
    this.#entries = new LRUCache<string, Entry>({
      max: MAX_ENTRIES,
      maxSize: maxBytes,
      sizeCalculation: (entry) => cachedBytes(entry.client),
    });
    this.#load = load;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  async get(clientId: string): Promise<ScimClient | undefined> {
    return this.peek(clientId) ?? this.refresh(clientId);
  }

  /** The client when it is cached and within the TTL, without waiting; undefined says only "ask get". */
  peek(clientId: string): ScimClient | undefined {
    const hit = this.#entries.get(clientId);
    return hit !== undefined && hit.expires > this.#clock.now().getTime() ? hit.client : undefined;
  }

  /**
   * Reads the client from the database, bypassing and refreshing the cache: a secret rotated through another
   * instance is seen before a request is refused.
   */
  async refresh(clientId: string): Promise<ScimClient | undefined> {
    const client = await this.#load(clientId);
    // A miss is not kept: a client just created through another instance must be found at once.
    if (client === undefined) {
      this.#entries.delete(clientId);
      return undefined;
    }
    this.#entries.set(clientId, { client, expires: this.#clock.now().getTime() + this.#ttlMs });
    return client;
  }

  /** The estimated bytes of the cached clients (at most the cache's maxBytes). */
  get bytes(): number {
    return this.#entries.calculatedSize;
  }

  forget(clientId: string): void {
    this.#entries.delete(clientId);
  }

  forgetOrganization(organizationId: string): void {
    for (const [id, entry] of [...this.#entries.entries()]) {
      if (entry.client.organizationId === organizationId) this.#entries.delete(id);
    }
  }
}
