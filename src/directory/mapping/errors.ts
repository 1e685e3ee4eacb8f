/** A data mapping could not be fetched, compiled or evaluated; the message is safe to show (no stack, no secrets). */
export class MappingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MappingError";
  }
}

/** A mapping given for a SCIM client is refused before it is stored: empty, not JSONata, or an unreadable source. */
export class InvalidMappingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidMappingError";
  }
}
