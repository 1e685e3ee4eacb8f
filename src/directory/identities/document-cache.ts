import { StoredDocument } from "./stored-document.js";

/** A stored document as of one row version. */
export interface VersionedDocument {
  readonly version: string;
  readonly document: StoredDocument;
  /**
   * The connection whose write left this version, when that write's events are known to have flowed rather than
   * been held: that connection then holds no event of the user while the row stays at this version (a held event
   * is only ever written by a write of the row), so its next write guarded by this version need not test for one.
   * Another connection's holds are its own: it may hold an earlier change of the user.
   */
  readonly flowedFor?: string | undefined;
}

export const DEFAULT_DOCUMENT_CACHE_SIZE = 10_000;

/**
 * The documents this process last wrote, by user, with their row version: a PATCH or PUT runs the change on the
 * remembered document and writes it with the version guard in one round trip, instead of reading the row first.
 * Reads do not fill it: remembering on every GET cost the hottest read about a tenth of its CPU.
 * Only the guard decides: a write applies only if the row is still that version, so an entry outdated by another
 * instance (or any write that bumps the version) costs a retry through the read, never a lost update. Whatever
 * the remembered document yields but a guarded write — a refusal, "nothing changed" — is decided again on a
 * document read from the database. Bounded: the least recently used entries go first.
 */
export class DocumentCache {
  readonly #entries = new Map<string, VersionedDocument>();
  readonly #capacity: number;

  constructor(capacity = DEFAULT_DOCUMENT_CACHE_SIZE) {
    this.#capacity = capacity;
  }

  get(orgId: string, id: string): VersionedDocument | undefined {
    return this.#entries.get(`${orgId}/${id}`);
  }

  /** `flowedFor`: see VersionedDocument. */
  remember(orgId: string, user: { readonly id: string } & VersionedDocument, flowedFor?: string): void {
    if (this.#capacity === 0) return;
    const key = `${orgId}/${user.id}`;
    this.#entries.delete(key);
    // A value of its own: what a reader of `user` parsed is not kept alive here.
    this.#entries.set(key, {
      version: user.version,
      document: new StoredDocument(user.document.text, user.document.serverKeys),
      flowedFor,
    });
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
  }

  forget(orgId: string, id: string): void {
    this.#entries.delete(`${orgId}/${id}`);
  }
}
