/** The document's JSON object (UserDocument of types.ts, which imports this file). */
type UserDocument = Record<string, unknown>;

/**
 * A stored document (`identities.scim`) as a value: jsonb's text, parsed on first use. A reader that hands the
 * document on whole (a SCIM response without a projection) never parses it; one that reads its values parses it once.
 */
export class StoredDocument {
  readonly text: string;
  /**
   * Whether the document holds a top-level key the server owns (id, meta, groups, password): written documents never
   * do, so a reader may splice the text next to the server's own keys only when this is false.
   */
  readonly serverKeys: boolean;
  #value: Readonly<UserDocument> | undefined;

  constructor(text: string, serverKeys: boolean) {
    this.text = text;
    this.serverKeys = serverKeys;
  }

  /** The parsed document, shared by every reader of this value: never changed in place. */
  get value(): Readonly<UserDocument> {
    if (this.#value === undefined) this.#value = JSON.parse(this.text) as UserDocument;
    return this.#value;
  }

  /** A parsed copy of its own, for a change to work on. */
  copy(): UserDocument {
    return JSON.parse(this.text) as UserDocument;
  }
}
