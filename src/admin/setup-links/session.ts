import { createHmac, timingSafeEqual } from "node:crypto";
import type { Clock } from "../../platform/clock.js";
import { isUuid } from "../../platform/ids.js";

export const SETUP_COOKIE = "roster_setup";
export const CSRF_HEADER = "x-csrf-token";
/** A session ends with its link, and after a working day at the latest. */
export const MAX_SESSION_SECONDS = 8 * 3600;

/**
 * The session a setup link's token is exchanged for: a cookie naming the link and the session's end, with an HMAC
 * under a key derived from ROSTER_SECRETS (any key verifies it, so sessions survive a key rotation and work on every
 * instance). The link itself is read on each request, so revoking it ends its sessions at once. The CSRF token is a
 * second HMAC of the cookie: a page of this origin reads it from the session endpoint; another site cannot.
 */
export class SetupSessionCodec {
  readonly #keys: readonly Buffer[];
  readonly #clock: Clock;

  constructor(secrets: readonly Buffer[], clock: Clock) {
    if (secrets.length === 0) throw new Error("SetupSessionCodec needs at least one secret");
    this.#keys = secrets.map((s) => createHmac("sha256", s).update("roster-setup-session-v1").digest());
    this.#clock = clock;
  }

  issue(linkId: string, linkExpires: Date): { value: string; maxAgeSeconds: number } {
    const now = this.#clock.now().getTime();
    const end = Math.min(linkExpires.getTime(), now + MAX_SESSION_SECONDS * 1000);
    const body = `${linkId}.${end}`;
    return { value: `${body}.${this.#mac(this.#signing(), body)}`, maxAgeSeconds: Math.ceil((end - now) / 1000) };
  }

  /** The link id of a valid, unexpired session cookie. */
  verify(value: string): string | undefined {
    const parts = value.split(".");
    if (parts.length !== 3) return undefined;
    const [linkId, end, mac] = parts as [string, string, string];
    if (!isUuid(linkId) || !/^\d{1,15}$/.test(end)) return undefined;
    const body = `${linkId}.${end}`;
    const given = Buffer.from(mac, "base64url");
    const ok = this.#keys.some((k) => {
      const want = Buffer.from(this.#mac(k, body), "base64url");
      return want.length === given.length && timingSafeEqual(want, given);
    });
    if (!ok || Number(end) <= this.#clock.now().getTime()) return undefined;
    return linkId;
  }

  csrfOf(cookie: string): string {
    return this.#mac(this.#signing(), `csrf.${cookie}`);
  }

  checkCsrf(cookie: string, presented: string | undefined): boolean {
    if (presented === undefined) return false;
    const given = Buffer.from(presented, "base64url");
    return this.#keys.some((k) => {
      const want = Buffer.from(this.#mac(k, `csrf.${cookie}`), "base64url");
      return want.length === given.length && timingSafeEqual(want, given);
    });
  }

  #signing(): Buffer {
    const key = this.#keys[0];
    if (key === undefined) throw new Error("no signing key");
    return key;
  }

  #mac(key: Buffer, text: string): string {
    return createHmac("sha256", key).update(text).digest("base64url");
  }
}
