import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { MAX_RESPONSE_BODY_BYTES, readBounded } from "../../src/webhooks/response-body.js";

const chunks = (...parts: string[]): Readable => Readable.from(parts.map((p) => Buffer.from(p)));

describe("readBounded", () => {
  it("keeps a short answer whole", async () => {
    expect(await readBounded(chunks("hello ", "world"))).toEqual({ text: "hello world", truncated: false });
    expect(await readBounded(chunks())).toEqual({ text: "", truncated: false });
  });

  it("keeps exactly 4 KiB untruncated, and says so from one byte more", async () => {
    const full = "a".repeat(MAX_RESPONSE_BODY_BYTES);
    expect(await readBounded(chunks(full))).toEqual({ text: full, truncated: false });
    expect(await readBounded(chunks(full, "b"))).toEqual({ text: full, truncated: true });
  });

  it("stops reading at the limit: an endless answer is cut after one chunk past it", async () => {
    let pulled = 0;
    const endless = new Readable({
      read() {
        pulled++;
        this.push(Buffer.alloc(1000, 0x61));
      },
    });
    const r = await readBounded(endless);
    expect(r.truncated).toBe(true);
    expect(r.text).toHaveLength(MAX_RESPONSE_BODY_BYTES);
    expect(endless.destroyed).toBe(true);
    // The stream reads ahead a little (its buffer), never on and on.
    expect(pulled).toBeLessThan(40);
  });

  it("drops a multi-byte character the cut splits, and replaces NUL (PostgreSQL text holds none)", async () => {
    // "€" is 3 bytes: 4 095 bytes of "a" leave room for one byte of it.
    const r = await readBounded(chunks(`${"a".repeat(MAX_RESPONSE_BODY_BYTES - 1)}€€`));
    expect(r).toEqual({ text: "a".repeat(MAX_RESPONSE_BODY_BYTES - 1), truncated: true });
    expect((await readBounded(chunks("a\u0000b"))).text).toBe("a\uFFFDb");
  });
});
