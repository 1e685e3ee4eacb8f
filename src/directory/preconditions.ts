/**
 * A write's precondition on the row version (the protocol's If-Match): the versions the writer accepts, or
 * undefined for none. The service compares it with the row it writes, in the write's own statement or under the
 * row's lock, never on an earlier read.
 */
export type ExpectedVersions = readonly string[] | undefined;

/** The row is not at any of the expected versions; `current` is the version it is at. */
export class VersionMismatchError extends Error {
  readonly current: string;

  constructor(current: string) {
    super(`the resource has changed: it is at version ${current}`);
    this.name = "VersionMismatchError";
    this.current = current;
  }
}

/** Throws VersionMismatchError unless `version` is one of `expected` (or nothing is expected). */
export function checkVersion(expected: ExpectedVersions, version: string): void {
  if (expected !== undefined && !expected.includes(version)) throw new VersionMismatchError(version);
}

export const versionMatches = (expected: ExpectedVersions, version: string): boolean =>
  expected === undefined || expected.includes(version);
