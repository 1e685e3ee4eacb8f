import { describe, expect, it } from "vitest";
import { type OpContext, OPERATIONS } from "../../bench/lib/ops.js";

/**
 * The peer comparison measures each write again in later rounds: a request that repeats what an earlier round already
 * wrote is a no-op, which Roster answers without writing, so each preparation must change what it sends.
 */
const context = {
  target: { origin: "http://127.0.0.1:1", headers: {}, clientId: "c", base: "/scim/c/v2" },
  users: [
    { n: 0, id: "00000000-0000-7000-8000-000000000000" },
    { n: 1, id: "00000000-0000-7000-8000-000000000001" },
  ],
  groups: [],
  usersUnavailable: undefined,
  groupsUnavailable: undefined,
} as unknown as OpContext;

describe("a write measured again changes what it writes", () => {
  it.each(["patch", "put", "create"])("%s: the n-th request of a later preparation differs", async (name) => {
    const op = OPERATIONS.find((o) => o.name === name);
    const first = await op?.prepare(context);
    const again = await op?.prepare(context);
    if (first?.kind !== "ready" || again?.kind !== "ready") throw new Error(`${name} is not ready`);
    for (const n of [0, 1, 7]) {
      const a = first.next(n);
      const b = again.next(n);
      expect(b.path).toBe(a.path);
      expect(b.body).not.toBe(a.body);
      expect(first.next(n).body).toBe(a.body);
    }
  });
});
