import { describe, expect, it } from "vitest";
import type { ClaimedEvent, Finished, OutboxBookkeeping } from "../../src/webhooks/outbox-repo.js";
import { LOST_CLAIM_RECHECK_MS, OwedBookkeeping } from "../../src/webhooks/owed-bookkeeping.js";

/** An outbox whose claimed rows the test decides: `visible` holds the tokens a release would find now. */
function fakeOutbox() {
  const visible = new Set<string>();
  const releases: string[][] = [];
  /** Each sweep of this dispatcher's own claims: the owner and the tokens it kept. */
  const sweeps: [string, string[]][] = [];
  const outbox: OutboxBookkeeping = {
    recordAndStart: async (_f: readonly Finished[], _s: readonly ClaimedEvent[]) => new Set<number>(),
    releaseClaimed: async () => {},
    releaseClaimTokens: async (tokens) => {
      releases.push([...tokens]);
      const found = new Set(tokens.filter((t) => visible.has(t)));
      for (const t of found) visible.delete(t);
      return found;
    },
    releaseOwnClaims: async (owner, keep) => {
      sweeps.push([owner, [...keep]]);
      return 0;
    },
  };
  return { outbox, visible, releases, sweeps };
}

const at = (ms: number) => new Date(ms);

describe("a lost claim owed by the dispatcher", () => {
  it("is looked for again, no more often than the recheck interval, until its rows are found", async () => {
    let elapsed = 0;
    const owed = new OwedBookkeeping(() => elapsed);
    const { outbox, visible, releases } = fakeOutbox();
    owed.claimLost("a", at(40_000));

    // Its commit is still waiting on the server: found nowhere, kept.
    await owed.settle(outbox, at(1_000));
    expect(releases).toEqual([["a"]]);
    expect(owed.empty).toBe(false);
    elapsed += LOST_CLAIM_RECHECK_MS - 1;
    await owed.settle(outbox, at(1_000));
    expect(releases).toHaveLength(1);

    // The commit went through: the next look finds and releases its rows, and nothing is owed any more.
    visible.add("a");
    elapsed += 1;
    await owed.settle(outbox, at(1_500));
    expect(releases).toEqual([["a"], ["a"]]);
    expect(owed.empty).toBe(true);
    elapsed += LOST_CLAIM_RECHECK_MS;
    await owed.settle(outbox, at(2_000));
    expect(releases).toHaveLength(2);
  });

  it("is looked for at once when another claim is lost, and given up once its lease has run out", async () => {
    let elapsed = 0;
    const owed = new OwedBookkeeping(() => elapsed);
    const { outbox, releases } = fakeOutbox();
    owed.claimLost("a", at(40_000));
    await owed.settle(outbox, at(1_000));
    owed.claimLost("b", at(41_000));
    await owed.settle(outbox, at(1_000));
    expect(releases).toEqual([["a"], ["a", "b"]]);

    // Past a's lease anyone may claim its rows: only b is still looked for, and then neither.
    elapsed += LOST_CLAIM_RECHECK_MS;
    await owed.settle(outbox, at(40_500));
    expect(releases.at(-1)).toEqual(["a", "b"]);
    elapsed += LOST_CLAIM_RECHECK_MS;
    await owed.settle(outbox, at(41_500));
    expect(releases.at(-1)).toEqual(["b"]);
    expect(owed.empty).toBe(true);
  });

  it("stays owed while the database is away", async () => {
    const owed = new OwedBookkeeping(() => 0);
    const { outbox, visible, releases } = fakeOutbox();
    const away: OutboxBookkeeping = {
      ...outbox,
      releaseClaimTokens: async () => {
        throw new Error("connect ECONNREFUSED");
      },
    };
    owed.claimLost("a", at(40_000));
    await expect(owed.settle(away, at(1_000))).rejects.toThrow("ECONNREFUSED");
    visible.add("a");
    await owed.settle(outbox, at(2_000));
    expect(releases).toEqual([["a"]]);
    expect(owed.empty).toBe(true);
  });
});

describe("the dispatcher's own claims after an outage", () => {
  it("are released once the database answers, all but those whose chains are in flight, and only once", async () => {
    const owed = new OwedBookkeeping(() => 0);
    const { outbox, sweeps } = fakeOutbox();
    owed.hold("in-flight");
    owed.hold("done");
    owed.unhold("done");
    await owed.settle(outbox, at(1_000), "me");
    expect(sweeps).toEqual([]);

    owed.outage();
    await owed.settle(outbox, at(2_000), "me");
    expect(sweeps).toEqual([["me", ["in-flight"]]]);
    await owed.settle(outbox, at(3_000), "me");
    expect(sweeps).toHaveLength(1);
  });

  it("are checked again after any bookkeeping the database did not take, and kept owed while it is away", async () => {
    const owed = new OwedBookkeeping(() => 0);
    const { outbox, sweeps } = fakeOutbox();
    const away: OutboxBookkeeping = {
      ...outbox,
      releaseOwnClaims: async () => {
        throw new Error("connect ECONNREFUSED");
      },
    };
    owed.notReleased([]);
    await expect(owed.settle(away, at(1_000), "me")).rejects.toThrow("ECONNREFUSED");
    await owed.settle(outbox, at(2_000), "me");
    expect(sweeps).toEqual([["me", []]]);
  });
});
