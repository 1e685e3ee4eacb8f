import { describe, expect, it } from "vitest";
import { AdminError } from "../../src/admin/errors.js";
import type { ApiKeyFields } from "../../src/apikeys/model.js";
import { parseIssuedKeyUpdate } from "../../src/admin/routes/api-keys-update.js";
import { applyChanges } from "../../src/apikeys/model.js";

const current: ApiKeyFields = {
  name: "k",
  actorId: "u1",
  scopes: ["a", "b"],
  metadata: { team: "x", env: "prod", labels: { tier: "gold", region: "eu" } },
  rateLimits: [{ name: "m", limit: 5, periodSeconds: 60 }],
  expireTime: new Date("2030-01-01T00:00:00Z"),
};

const apply = (mask: string | undefined, body: Record<string, unknown>) =>
  applyChanges(current, parseIssuedKeyUpdate(mask, body));

describe("issued key update mask", () => {
  it.each<[string | undefined, Record<string, unknown>, Partial<ApiKeyFields>]>([
    [undefined, { name: "n" }, { name: "n", scopes: ["a", "b"] }],
    [undefined, { key_id: "ignored", create_time: "ignored", scopes: ["c"] }, { name: "k", scopes: ["c"] }],
    [undefined, { metadata: { only: 1 } }, { metadata: { only: 1 } }],
    ["name", { name: "n", scopes: ["ignored"] }, { name: "n", scopes: ["a", "b"] }],
    ["scopes", {}, { scopes: [] }],
    ["actor_id", { actor_id: "" }, { actorId: null }],
    ["expire_time", { expire_time: null }, { expireTime: null }],
    ["expire_time", { expire_time: "2031-01-01T01:00:00+01:00" }, { expireTime: new Date("2031-01-01T00:00:00Z") }],
    [
      "rate_limits",
      { rate_limits: [{ limit: 1, period: "1s" }] },
      { rateLimits: [{ name: "default", limit: 1, periodSeconds: 1 }] },
    ],
    ["metadata.team", { metadata: { team: "y" } }, { metadata: { ...current.metadata, team: "y" } }],
    ["metadata.team", {}, { metadata: { env: "prod", labels: { tier: "gold", region: "eu" } } }],
    ["metadata.labels.tier", {}, { metadata: { team: "x", env: "prod", labels: { region: "eu" } } }],
    [
      "metadata.labels.tier",
      { metadata: { labels: { tier: "s" } } },
      { metadata: { ...current.metadata, labels: { tier: "s", region: "eu" } } },
    ],
    ["metadata.missing.deep", {}, { metadata: current.metadata }],
    ["metadata.a.b", { metadata: { a: { b: 1 } } }, { metadata: { ...current.metadata, a: { b: 1 } } }],
    ["*", { name: "n" }, { name: "n", actorId: null, scopes: [], metadata: {}, rateLimits: [], expireTime: null }],
  ])("mask %s with %j", (mask, body, expected) => {
    expect(apply(mask, body)).toEqual({ ...current, ...expected });
  });

  it("does not mutate the current fields", () => {
    const snapshot = JSON.stringify(current);
    apply("metadata.labels.tier", {});
    expect(JSON.stringify(current)).toBe(snapshot);
  });

  it.each(["key_id", "secret", "create_time", "prefix", "organization_id", "bogus", "name.first", "*,name"])(
    "refuses %s with INVALID_ARGUMENT",
    (mask) => {
      expect(() => parseIssuedKeyUpdate(mask, { name: "n" })).toThrowError(AdminError);
      try {
        parseIssuedKeyUpdate(mask, { name: "n" });
      } catch (e) {
        expect((e as AdminError).status).toBe("INVALID_ARGUMENT");
      }
    },
  );

  it("refuses metadata that grows past 16 KiB through a nested path", () => {
    const changes = parseIssuedKeyUpdate("metadata.big", { metadata: { big: "x".repeat(17 * 1024) } });
    expect(() => applyChanges(current, changes)).toThrowError(/16384 bytes/);
  });
});
