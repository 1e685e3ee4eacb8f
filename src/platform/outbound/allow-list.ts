import ipaddr from "ipaddr.js";
import { BlockList, isIP } from "node:net";

/**
 * Whether an address is publicly routable: IPv4 unicast outside every special range ipaddr.js knows (loopback,
 * RFC 1918, link-local with the cloud metadata service, CGNAT 100.64/10, unspecified, broadcast, multicast,
 * reserved and documentation ranges), or IPv6 global unicast (2000::/3) outside its special ranges (unique local
 * fc00::/7, link-local, multicast, NAT64, 6to4, Teredo, documentation). An IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`, which URL parsing writes `::ffff:7f00:1`) is judged as the IPv4 address it carries.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address);
  if (ip.range() !== "unicast") return false;
  return ip.kind() === "ipv4" || ip.match(GLOBAL_UNICAST_V6);
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/** The textual form a BlockList and a comparison take: IPv4-mapped IPv6 as its IPv4 address, IPv6 in full. */
export function canonicalAddress(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(bare) || isIP(bare) === 0) return undefined;
  return ipaddr.process(bare).toNormalizedString();
}

const familyOf = (address: string): "ipv4" | "ipv6" => (isIP(address) === 6 ? "ipv6" : "ipv4");

/**
 * An entry of an outbound allow list (ROSTER_MAPPING_URL_ALLOW, ROSTER_WEBHOOK_URL_ALLOW) is a host name, `*.` plus
 * a domain, an IP address or a CIDR range.
 */
export function allowEntryProblem(entry: string): string | undefined {
  const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
  if (cidr !== null) {
    const [, address = "", prefix = ""] = cidr;
    const max = isIP(address) === 4 ? 32 : isIP(address) === 6 ? 128 : 0;
    return max > 0 && Number(prefix) <= max ? undefined : `"${entry}" is not a valid CIDR range`;
  }
  if (isIP(entry) !== 0) return undefined;
  return /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(entry)
    ? undefined
    : `"${entry}" is not a host name, *.domain, IP address or CIDR range`;
}

/** Parses a comma-separated allow list variable; each bad entry becomes a problem named after the variable. */
export function parseAllowList(name: string, value: string | undefined): { entries: string[]; problems: string[] } {
  const entries = (value ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  const problems: string[] = [];
  for (const entry of entries) {
    const problem = allowEntryProblem(entry);
    if (problem !== undefined) problems.push(`${name}: ${problem}`);
  }
  return { entries, problems };
}

/**
 * An allow list, compiled: which host names a URL may name, and which non-public addresses were allowed explicitly.
 * Naming a host never allows what it resolves to internally: non-public addresses only through IP or CIDR entries.
 */
export class UrlAllowList {
  readonly #names = new Set<string>();
  readonly #suffixes: string[] = [];
  readonly #addresses = new BlockList();
  readonly #empty: boolean;

  constructor(entries: readonly string[]) {
    this.#empty = entries.length === 0;
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
      const single = cidr === null ? canonicalAddress(entry) : undefined;
      if (cidr !== null) {
        const [, address = "", prefix = "0"] = cidr;
        const network = canonicalAddress(address);
        // `::ffff:10.0.0.0/104` is the IPv4 range 10.0.0.0/8.
        const mapped = network !== undefined && isIP(network) === 4 && isIP(address) === 6;
        if (network !== undefined) {
          this.#addresses.addSubnet(network, mapped ? Number(prefix) - 96 : Number(prefix), familyOf(network));
        }
      } else if (single !== undefined) {
        this.#addresses.addAddress(single, familyOf(single));
      } else if (entry.startsWith("*.")) {
        this.#suffixes.push(entry.slice(1));
      } else {
        this.#names.add(entry.replace(/\.$/, ""));
      }
    }
  }

  get empty(): boolean {
    return this.#empty;
  }

  /** Whether the list has host-name entries (`name`, `*.domain`), as opposed to addresses only. */
  get hasNames(): boolean {
    return this.#names.size > 0 || this.#suffixes.length > 0;
  }

  /** Whether a URL may name this host (`hostname` as URL parses it, IPv6 in brackets). */
  hostAllowed(hostname: string): boolean {
    const host = hostname
      .toLowerCase()
      .replace(/^\[|\]$/g, "")
      .replace(/\.$/, "");
    if (isIP(host) !== 0) return this.listsAddress(host);
    return this.#names.has(host) || this.#suffixes.some((suffix) => host.endsWith(suffix));
  }

  /** Whether a connection may go to this resolved address: public ones always, others only when listed. */
  addressAllowed(address: string): boolean {
    const ip = canonicalAddress(address);
    if (ip === undefined) return false;
    return this.listsAddress(ip) || isPublicAddress(ip);
  }

  /** Whether an IP or CIDR entry names this address. */
  listsAddress(address: string): boolean {
    const ip = canonicalAddress(address);
    return ip !== undefined && this.#addresses.check(ip, familyOf(ip));
  }
}
