import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { UrlAllowList } from "../../src/directory/mapping/policy.js";

/** Which hosts and resolved addresses a mapping fetch may reach (docs/decisions.md "Mapping sandbox"). */
describe("UrlAllowList", () => {
  const list = new UrlAllowList(["config.example.com", "*.scripts.example.org", "10.20.0.0/16", "127.0.0.1", "::1"]);

  it.each([
    ["config.example.com", true],
    ["CONFIG.example.com.", true],
    ["other.example.com", false],
    ["a.scripts.example.org", true],
    ["scripts.example.org", false],
    ["10.20.3.4", true],
    ["10.21.0.1", false],
    ["127.0.0.1", true],
    ["[::1]", true],
    ["8.8.8.8", false],
  ])("host %s allowed: %s", (host, allowed) => {
    expect(list.hostAllowed(host)).toBe(allowed);
  });

  it.each([
    ["93.184.215.14", true],
    ["2606:4700::6810:85e5", true],
    ["10.20.3.4", true],
    ["10.21.0.1", false],
    ["127.0.0.1", true],
    ["127.0.0.2", false],
    ["::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:192.168.1.1", false],
    ["169.254.169.254", false],
    ["172.16.5.5", false],
    ["192.168.0.1", false],
    ["100.64.1.1", false],
    ["0.0.0.0", false],
    ["fd00::1", false],
    ["fe80::1", false],
    ["::", false],
    ["224.0.0.1", false],
    ["not an address", false],
  ])("resolved address %s allowed: %s", (address, allowed) => {
    expect(list.addressAllowed(address)).toBe(allowed);
  });

  it("an empty list allows no host at all", () => {
    const empty = new UrlAllowList([]);
    expect(empty.empty).toBe(true);
    expect(empty.hostAllowed("config.example.com")).toBe(false);
  });
});

describe("ROSTER_MAPPING_DIR and ROSTER_MAPPING_URL_ALLOW", () => {
  it("are unset by default: file:// and http(s):// mappings refused", () => {
    expect(loadConfig({})).toMatchObject({ mappingDir: undefined, mappingUrlAllow: [] });
  });

  it("are read as a directory and a comma-separated list", () => {
    const c = loadConfig({
      ROSTER_MAPPING_DIR: "/etc/roster/mappings",
      ROSTER_MAPPING_URL_ALLOW: " a.example.com, 10.0.0.0/8 ,",
    });
    expect(c).toMatchObject({ mappingDir: "/etc/roster/mappings", mappingUrlAllow: ["a.example.com", "10.0.0.0/8"] });
  });

  it("refuses entries that are not host names, *.domains, addresses or CIDR ranges", () => {
    expect(() => loadConfig({ ROSTER_MAPPING_URL_ALLOW: "http://a.example.com,10.0.0.0/33,*" })).toThrow(ConfigError);
    try {
      loadConfig({ ROSTER_MAPPING_URL_ALLOW: "http://a.example.com,10.0.0.0/33" });
    } catch (e) {
      expect((e as ConfigError).problems).toHaveLength(2);
    }
  });
});
