import { describe, expect, it } from "vitest";
import { matchSecret } from "../../src/directory/scim-clients/service.js";
import type { ScimClient } from "../../src/directory/scim-clients/types.js";
import { hashSecret } from "../../src/platform/crypto.js";

const now = new Date("2026-01-01T00:00:00Z");
const clientWith = (secret: string, previous?: { secret: string; expire: Date }): ScimClient =>
  ({
    secretHash: hashSecret(secret),
    previousSecretHash: previous === undefined ? null : hashSecret(previous.secret),
    previousSecretExpireTime: previous?.expire ?? null,
  }) as ScimClient;

describe("matchSecret, with the current secret confirmed by an earlier request", () => {
  const secret = "s".repeat(40);

  it("still refuses any other secret, of the same length or not", () => {
    const client = clientWith(secret);
    expect(matchSecret(client, secret, now)).toBe("current");
    expect(matchSecret(client, secret, now)).toBe("current");
    expect(matchSecret(client, `${"s".repeat(39)}t`, now)).toBeUndefined();
    expect(matchSecret(client, "s".repeat(41), now)).toBeUndefined();
    expect(matchSecret(client, "", now)).toBeUndefined();
  });

  it("answers for the hash it matched only: the same record with a new secret hash refuses the old secret", () => {
    const client = clientWith(secret);
    expect(matchSecret(client, secret, now)).toBe("current");
    const rotated = Object.assign(client, { secretHash: hashSecret("n".repeat(40)) });
    expect(matchSecret(rotated, secret, now)).toBeUndefined();
    expect(matchSecret(rotated, "n".repeat(40), now)).toBe("current");
  });

  it("leaves the previous secret to its grace period", () => {
    const client = clientWith(secret, { secret: "p".repeat(40), expire: new Date(now.getTime() + 1000) });
    expect(matchSecret(client, secret, now)).toBe("current");
    expect(matchSecret(client, "p".repeat(40), now)).toBe("previous");
    expect(matchSecret(client, "p".repeat(40), new Date(now.getTime() + 1000))).toBeUndefined();
    expect(matchSecret(client, secret, new Date(now.getTime() + 1000))).toBe("current");
  });
});
