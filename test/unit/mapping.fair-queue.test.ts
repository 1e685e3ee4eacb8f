import { describe, expect, it } from "vitest";
import { FairQueue } from "../../src/directory/mapping/fair-queue.js";

const takeAll = (q: FairQueue<string>) => {
  const taken: string[] = [];
  for (let next = q.take(); next !== undefined; next = q.take()) taken.push(next.job);
  return taken;
};

describe("FairQueue", () => {
  it("serves tenants round robin, not in arrival order", () => {
    const q = new FairQueue<string>(10, 100);
    for (const job of ["a1", "a2", "a3", "b1", "c1", "b2"]) q.push(job[0] ?? "", job);
    expect(takeAll(q)).toEqual(["a1", "b1", "c1", "a2", "b2", "a3"]);
  });

  it("runs at most `perTenant` jobs of one tenant at once; another tenant's job passes them", () => {
    const q = new FairQueue<string>(1, 100);
    for (const job of ["a1", "a2", "b1"]) q.push(job[0] ?? "", job);
    expect(takeAll(q)).toEqual(["a1", "b1"]);
    expect(q.size).toBe(1);
    q.done("a");
    expect(q.take()?.job).toBe("a2");
  });

  it("refuses a tenant's job beyond its queue bound, not another tenant's", () => {
    const q = new FairQueue<string>(1, 2);
    expect(q.push("a", "a1")).toBe(true);
    expect(q.push("a", "a2")).toBe(true);
    expect(q.push("a", "a3")).toBe(false);
    expect(q.push("b", "b1")).toBe(true);
  });

  it("removes a waiting job, and only a waiting one", () => {
    const q = new FairQueue<string>(1, 10);
    q.push("a", "a1");
    q.push("a", "a2");
    expect(q.remove("a", "a2")).toBe(true);
    expect(q.remove("a", "a2")).toBe(false);
    expect(takeAll(q)).toEqual(["a1"]);
    expect(q.remove("a", "a1")).toBe(false);
  });
});
