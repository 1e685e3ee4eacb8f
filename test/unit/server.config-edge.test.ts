import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { isLoopback, publicUrlWarnings } from "../../src/platform/public-url.js";
import { parseTrustProxy } from "../../src/platform/trust-proxy.js";

describe("ROSTER_TRUST_PROXY", () => {
  it.each([
    ["false", false],
    ["true", true],
    ["TRUE", true],
    ["1", 1],
    ["2", 2],
    ["127.0.0.1", ["127.0.0.1"]],
    ["10.0.0.0/8, 192.168.1.7", ["10.0.0.0/8", "192.168.1.7"]],
    ["::1,fd00::/8", ["::1", "fd00::/8"]],
    ["Loopback,uniquelocal", ["loopback", "uniquelocal"]],
  ])("%s → %j", (raw, expected) => {
    expect(parseTrustProxy(raw)).toEqual(expected);
  });

  it.each(["0", "33", "yes", "10.0.0.0/33", "::1/129", "10.0.0.1/8/2", "example.com", ",", "300.1.1.1"])(
    "%s is refused with what it may be",
    (raw) => {
      expect(parseTrustProxy(raw)).toMatch(/must be true, false, a hop count/);
    },
  );

  it("is false by default, and a bad value is a configuration error", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(() => loadConfig({ ROSTER_TRUST_PROXY: "sometimes" })).toThrow(/ROSTER_TRUST_PROXY/);
  });
});

describe("ROSTER_TLS_CERT and ROSTER_TLS_KEY", () => {
  it("both or neither", () => {
    expect(loadConfig({}).tls).toBeUndefined();
    expect(loadConfig({ ROSTER_TLS_CERT: "/c.pem", ROSTER_TLS_KEY: "/k.pem" }).tls).toEqual({
      certFile: "/c.pem",
      keyFile: "/k.pem",
    });
    expect(() => loadConfig({ ROSTER_TLS_CERT: "/c.pem" })).toThrow(/set both/);
    expect(() => loadConfig({ ROSTER_TLS_KEY: "/k.pem" })).toThrow(/set both/);
  });
});

describe("public URL warnings", () => {
  it.each([
    ["http://127.0.0.1:8080", ["loopback", "plain HTTP"]],
    ["http://localhost:8080", ["loopback", "plain HTTP"]],
    ["https://[::1]:8443", ["loopback"]],
    ["https://127.0.0.1:8443", ["loopback"]],
    ["http://0.0.0.0:8080", ["loopback", "plain HTTP"]],
    ["http://roster.internal", ["plain HTTP"]],
    ["https://roster.example.com", []],
    ["https://10.1.2.3", []],
  ])("%s → %j", (url, expected) => {
    const warnings = publicUrlWarnings(url);
    expect(warnings).toHaveLength(expected.length);
    for (const [i, what] of expected.entries()) expect(warnings[i]).toContain(what);
  });

  it.each([
    ["localhost", true],
    ["app.localhost", true],
    ["127.10.0.1", true],
    ["::ffff:127.0.0.1", true],
    ["[::1]", true],
    ["example.com", false],
    ["128.0.0.1", false],
  ])("loopback %s: %s", (host, expected) => {
    expect(isLoopback(host)).toBe(expected);
  });
});
