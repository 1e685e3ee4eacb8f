import { isIP } from "node:net";

/** `false`: no one; `true`: every peer; a number: that many proxy hops; a list: peers in these addresses or CIDRs. */
export type TrustProxy = boolean | number | readonly string[];

/** proxy-addr's names for the private ranges, accepted in a list as Fastify's `trustProxy` accepts them. */
const RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** ROSTER_TRUST_PROXY's value, or a sentence saying what is wrong with it. */
export function parseTrustProxy(raw: string): TrustProxy | string {
  const lower = raw.trim().toLowerCase();
  if (lower === "true") return true;
  if (lower === "false") return false;
  if (/^\d+$/.test(lower)) {
    const hops = Number(lower);
    if (hops >= 1 && hops <= 32) return hops;
  }
  const entries = raw
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  const bad = entries.filter((e) => !RANGE_NAMES.has(e.toLowerCase()) && !isAddressOrCidr(e));
  if (entries.length === 0 || bad.length > 0 || /^\d+$/.test(lower)) {
    return (
      `"${raw}" must be true, false, a hop count from 1 to 32, or a comma-separated list of IP addresses, ` +
      "CIDR ranges or loopback/linklocal/uniquelocal"
    );
  }
  return entries.map((e) => (RANGE_NAMES.has(e.toLowerCase()) ? e.toLowerCase() : e));
}

function isAddressOrCidr(entry: string): boolean {
  const [address = "", prefix, extra] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
