import { BlockList, isIP } from "node:net";

/**
 * Where mapping scripts may come from (docs/decisions.md "Mapping sandbox"): `file://` only below `dir`, `http(s)://`
 * only to allowed hosts. Both unset refuse those schemes; inline and `base64://` mappings need neither.
 */
export interface MappingSourcePolicy {
  /** ROSTER_MAPPING_DIR: the directory `file://` scripts must resolve into (symlinks and `..` resolved first). */
  readonly dir: string | undefined;
  /** ROSTER_MAPPING_URL_ALLOW: host names (`config.example.com`, `*.example.com`), IP addresses or CIDR ranges. */
  readonly urlAllow: readonly string[];
}

export const NO_MAPPING_SOURCES: MappingSourcePolicy = { dir: undefined, urlAllow: [] };

/** Addresses a mapping fetch never reaches unless an IP or CIDR entry of the allow list names them. */
const NON_PUBLIC: readonly [string, number, "ipv4" | "ipv6"][] = [
  ["0.0.0.0", 8, "ipv4"], // "this" network
  ["10.0.0.0", 8, "ipv4"], // RFC 1918
  ["100.64.0.0", 10, "ipv4"], // RFC 6598 shared address space
  ["127.0.0.0", 8, "ipv4"], // loopback
  ["169.254.0.0", 16, "ipv4"], // link-local, cloud metadata services
  ["172.16.0.0", 12, "ipv4"], // RFC 1918
  ["192.0.0.0", 24, "ipv4"], // IETF protocol assignments
  ["192.168.0.0", 16, "ipv4"], // RFC 1918
  ["198.18.0.0", 15, "ipv4"], // benchmarking
  ["224.0.0.0", 4, "ipv4"], // multicast
  ["240.0.0.0", 4, "ipv4"], // reserved, broadcast
  ["::", 128, "ipv6"], // unspecified
  ["::1", 128, "ipv6"], // loopback
  ["64:ff9b:1::", 48, "ipv6"], // local-use NAT64
  ["fc00::", 7, "ipv6"], // unique local
  ["fe80::", 10, "ipv6"], // link-local
  ["ff00::", 8, "ipv6"], // multicast
];

const nonPublic = new BlockList();
for (const [network, prefix, family] of NON_PUBLIC) nonPublic.addSubnet(network, prefix, family);

/** `::ffff:127.0.0.1` is 127.0.0.1: IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry. */
const unmapped = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
};

const familyOf = (address: string): "ipv4" | "ipv6" => (isIP(address) === 6 ? "ipv6" : "ipv4");

/** An entry of ROSTER_MAPPING_URL_ALLOW is a host name, `*.` plus a domain, an IP address or a CIDR range. */
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

/** The allow list, compiled: which URL hosts may be named, and which non-public addresses were allowed explicitly. */
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
      if (cidr !== null) {
        const [, address = "", prefix = "0"] = cidr;
        this.#addresses.addSubnet(unmapped(address), Number(prefix), familyOf(unmapped(address)));
      } else if (isIP(entry) !== 0) {
        this.#addresses.addAddress(unmapped(entry), familyOf(unmapped(entry)));
      } else if (entry.startsWith("*.")) {
        this.#suffixes.push(entry.slice(1));
      } else {
        this.#names.add(entry);
      }
    }
  }

  get empty(): boolean {
    return this.#empty;
  }

  /** Whether a URL may name this host (`hostname` as URL parses it, IPv6 in brackets). */
  hostAllowed(hostname: string): boolean {
    const host = hostname
      .toLowerCase()
      .replace(/^\[|\]$/g, "")
      .replace(/\.$/, "");
    if (isIP(host) !== 0) return this.#explicit(host);
    return this.#names.has(host) || this.#suffixes.some((suffix) => host.endsWith(suffix));
  }

  /** Whether a connection may go to this resolved address: public ones always, others only when listed. */
  addressAllowed(address: string): boolean {
    const ip = unmapped(address);
    if (isIP(ip) === 0) return false;
    return this.#explicit(ip) || !nonPublic.check(ip, familyOf(ip));
  }

  #explicit(address: string): boolean {
    const ip = unmapped(address);
    return this.#addresses.check(ip, familyOf(ip));
  }
}
