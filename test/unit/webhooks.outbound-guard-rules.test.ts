import { describe, expect, it } from "vitest";
import { isPublicAddress, UrlAllowList } from "../../src/platform/outbound/allow-list.js";
import { OutboundGuard } from "../../src/platform/outbound/guard.js";

const webhooks = (allow: readonly string[] = []) =>
  new OutboundGuard({ variable: "ROSTER_WEBHOOK_URL_ALLOW", allow, hosts: "any" });
const problem = (guard: OutboundGuard, url: string) => guard.urlProblem(new URL(url));

describe("the outbound guard refuses every spelling of a non-public address", () => {
  const guard = webhooks();
  it.each([
    ["http://127.0.0.1/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f000001/", "loopback"],
    ["http://0x7f.1/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://017700000001/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://127.0.0.1./", "loopback"],
    ["http://[::1]/", "loopback"],
    ["http://[0:0:0:0:0:0:0:1]/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://[::ffff:7f00:1]/", "loopback"],
    ["http://0.0.0.0/", "unspecified"],
    ["http://0/", "unspecified"],
    ["http://[::]/", "unspecified"],
    ["http://10.0.0.1/", "private"],
    ["http://172.16.0.1/", "private"],
    ["http://192.168.1.1/", "private"],
    ["http://[::ffff:10.0.0.1]/", "private"],
    ["http://169.254.169.254/", "link-local"],
    ["http://[fe80::1]/", "link-local"],
    ["http://100.64.0.1/", "shared"],
    ["http://[fc00::1]/", "unique local"],
    ["http://[fd12:3456::1]/", "unique local"],
    ["http://224.0.0.1/", "multicast"],
    ["http://[ff02::1]/", "multicast"],
    ["http://255.255.255.255/", "broadcast"],
    ["http://[64:ff9b::7f00:1]/", "non-public"],
    ["http://[::7f00:1]/", "non-public"],
    ["http://[2002:7f00:1::]/", "non-public"],
  ])("%s (%s)", (url, kind) => {
    expect(problem(guard, url)).toMatch(new RegExp(`${kind}.* address, not allowed unless ROSTER_WEBHOOK_URL_ALLOW`));
  });

  it.each(["https://hooks.example.com/in", "http://8.8.8.8/", "http://[2606:4700::1111]/", "https://1.1.1.1:8443/x"])(
    "%s passes",
    (url) => expect(problem(guard, url)).toBeUndefined(),
  );

  it("refuses schemes other than http(s)", () => {
    expect(problem(guard, "ftp://example.com/")).toMatch(/not http/);
  });
});

describe("ROSTER_WEBHOOK_URL_ALLOW", () => {
  it("an IP entry lets that address through in any spelling, and no other", () => {
    const guard = webhooks(["127.0.0.1"]);
    expect(problem(guard, "http://127.0.0.1:8080/")).toBeUndefined();
    expect(problem(guard, "http://2130706433/")).toBeUndefined();
    expect(problem(guard, "http://[::ffff:127.0.0.1]/")).toBeUndefined();
    expect(problem(guard, "http://127.0.0.2/")).toMatch(/loopback/);
    expect(problem(guard, "http://[::1]/")).toMatch(/loopback/);
  });

  it("CIDR entries, IPv4-mapped ones included, open their range", () => {
    const guard = webhooks(["10.0.0.0/8", "::ffff:192.168.0.0/112", "fd00::/8"]);
    expect(problem(guard, "http://10.20.30.40/")).toBeUndefined();
    expect(problem(guard, "http://192.168.7.9/")).toBeUndefined();
    expect(problem(guard, "http://[fd00::5]/")).toBeUndefined();
    expect(problem(guard, "http://172.16.0.1/")).toMatch(/private/);
  });

  it("host-name entries make the listed hosts the only ones a webhook may name", () => {
    const guard = webhooks(["hooks.example.com", "*.partner.example", "10.0.0.0/8"]);
    expect(problem(guard, "https://hooks.example.com/x")).toBeUndefined();
    expect(problem(guard, "https://a.partner.example/x")).toBeUndefined();
    expect(problem(guard, "https://elsewhere.example.org/x")).toMatch(/not listed in ROSTER_WEBHOOK_URL_ALLOW/);
    expect(problem(guard, "http://10.1.1.1/")).toBeUndefined();
  });

  it("refuses this service's own origin, whatever the spelling", () => {
    const guard = new OutboundGuard({
      variable: "ROSTER_WEBHOOK_URL_ALLOW",
      allow: ["127.0.0.1"],
      hosts: "any",
      refusedOrigins: () => ["http://127.0.0.1:8080"],
    });
    expect(problem(guard, "http://2130706433:8080/v2alpha1/admin/")).toMatch(/this service itself/);
    expect(problem(guard, "http://127.0.0.1:8081/")).toBeUndefined();
  });
});

describe("checks after DNS resolution", () => {
  it("a name resolving to loopback is refused unless its addresses are listed", async () => {
    expect(await webhooks().check(new URL("http://localhost:1/"))).toMatch(/resolves to a loopback address/);
    expect(await webhooks(["127.0.0.1", "::1"]).check(new URL("http://localhost:1/"))).toBeUndefined();
  });

  it("a connection to a name resolving to loopback fails with the guard's refusal, before any byte is sent", async () => {
    const guard = webhooks();
    const { request } = await import("undici");
    await expect(request("http://localhost:9/", { dispatcher: guard.dispatcher })).rejects.toThrow(
      /resolves to a loopback address/,
    );
    await guard.close();
  });
});

describe("isPublicAddress and the allow list agree", () => {
  it.each([
    ["8.8.8.8", true],
    ["127.0.0.1", false],
    ["::ffff:8.8.8.8", true],
    ["2001:db8::1", false],
    ["not an address", false],
  ])("%s → %s", (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
    expect(new UrlAllowList([]).addressAllowed(address)).toBe(expected);
  });
});
