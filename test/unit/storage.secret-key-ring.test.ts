import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SecretBox } from "../../src/platform/crypto.js";

const A = Buffer.from("key-a-0123456789abcdef0123456789abcdef");
const B = Buffer.from("key-b-0123456789abcdef0123456789abcdef");

/** A value in the earlier v1 format (no key id), as stored before key ids existed. */
function sealV1(secret: Buffer, plaintext: string): string {
  const key = createHash("sha256").update("roster-secretbox:").update(secret).digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv, cipher.getAuthTag(), ct]
    .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
    .join(".");
}

describe("SecretBox key ring", () => {
  it("seals with the first key and names it, without revealing it", () => {
    const sealed = new SecretBox([A, B]).seal("whsec_0123456789abcdef");
    expect(sealed.startsWith(new SecretBox([A]).primaryPrefix)).toBe(true);
    expect(sealed).not.toContain(A.toString("base64url").slice(0, 8));
    expect(new SecretBox([B, A]).open(sealed)).toBe("whsec_0123456789abcdef");
  });

  it("refuses a value whose key left the ring", () => {
    const sealed = new SecretBox([A]).seal("x");
    expect(() => new SecretBox([B]).open(sealed)).toThrow("not in ROSTER_SECRETS");
  });

  it("still opens the v1 format with any key of the ring", () => {
    const legacy = sealV1(A, "legacy secret");
    expect(new SecretBox([B, A]).open(legacy)).toBe("legacy secret");
    expect(() => new SecretBox([B]).open(legacy)).toThrow("no key of ROSTER_SECRETS");
  });

  it("refuses a tampered value", () => {
    const sealed = new SecretBox([A]).seal("x");
    const parts = sealed.split(".");
    // Flip the ciphertext's bits: replacing it with a fixed byte would leave it unchanged 1 time in 256.
    const ciphertext = Buffer.from(parts[4] ?? "", "base64url");
    ciphertext[0] = (ciphertext[0] ?? 0) ^ 0xff;
    parts[4] = ciphertext.toString("base64url");
    expect(() => new SecretBox([A]).open(parts.join("."))).toThrow();
  });
});
