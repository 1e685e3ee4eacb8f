import ipaddr from "ipaddr.js";
import { type LookupAddress, lookup as dnsLookup } from "node:dns";
import { Agent, buildConnector } from "undici";
import { canonicalAddress, UrlAllowList } from "./allow-list.js";

/**
 * Where one kind of outbound request may go (docs/security.md "Outbound requests"). Webhook deliveries, their test
 * events and resends, and mapping script fetches each hold one guard; every connection they make goes through it.
 */
export interface OutboundPolicy {
  /** The variable the allow list comes from, named in refusals (`ROSTER_WEBHOOK_URL_ALLOW`). */
  readonly variable: string;
  /** Host names, `*.domain`, IP addresses or CIDR ranges (allow-list.ts). */
  readonly allow: readonly string[];
  /**
   * `listed`: a URL must name a listed host, an empty list refuses every URL (mapping scripts). `any`: any host,
   * unless the list has host-name entries — then only those (webhooks).
   */
  readonly hosts: "listed" | "any";
  /** Origins never reached whatever they resolve to (Roster's own public URL); read at each check. */
  readonly refusedOrigins?: () => readonly string[];
  /** Bound on connecting, DNS included; default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Keep-alive connections per origin; default undici's (unbounded). */
  readonly connectionsPerOrigin?: number;
  readonly keepAliveTimeoutMs?: number;
}

/** A refusal by the guard; the HTTP client rejects with it (or with an error caused by it). */
export class OutboundRefused extends Error {
  readonly code = "ROSTER_OUTBOUND_REFUSED";
}

/** The guard's refusal inside an HTTP client's error (undici wraps connect errors), or undefined. */
export function outboundRefusal(e: unknown): OutboundRefused | undefined {
  for (let cause = e, depth = 0; typeof cause === "object" && cause !== null && depth < 5; depth++) {
    if (cause instanceof OutboundRefused) return cause;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

const RANGE_NAMES: Readonly<Record<string, string>> = {
  loopback: "a loopback",
  private: "a private (RFC 1918)",
  linkLocal: "a link-local",
  uniqueLocal: "a unique local (fc00::/7)",
  carrierGradeNat: "a shared (100.64.0.0/10)",
  unspecified: "an unspecified",
  multicast: "a multicast",
  broadcast: "a broadcast",
};

/** "a loopback address", "a private (RFC 1918) address", … for a refused address. */
function kindOf(address: string): string {
  const range = ipaddr.isValid(address) ? ipaddr.process(address).range() : "invalid";
  return `${RANGE_NAMES[range] ?? "a non-public"} address`;
}

/**
 * Checks outbound URLs and connects only to checked addresses: a name is resolved once, every address it resolves
 * to must be public or listed, and the socket goes to that address (TLS SNI and `Host` keep the name), so a name
 * cannot pass the check with one address and connect to another (DNS rebinding). Numeric spellings of an address
 * (`2130706433`, `0x7f000001`, `127.1`, `[::ffff:127.0.0.1]`) are normalised by URL parsing before any check.
 */
export class OutboundGuard {
  readonly #policy: OutboundPolicy;
  readonly #allow: UrlAllowList;
  /** Connections through the guard: pass as undici's `dispatcher`. Redirects are never followed by it. */
  readonly dispatcher: Agent;

  constructor(policy: OutboundPolicy) {
    this.#policy = policy;
    this.#allow = new UrlAllowList(policy.allow);
    const base = buildConnector({ timeout: policy.connectTimeoutMs ?? 10_000 });
    const connect: buildConnector.connector = (options, callback) => {
      this.#resolve(options.hostname).then(
        (address) => base({ ...options, hostname: address }, callback),
        (e: unknown) => callback(e instanceof Error ? e : new Error(String(e)), null),
      );
    };
    this.dispatcher = new Agent({
      connect,
      ...(policy.connectionsPerOrigin === undefined ? {} : { connections: policy.connectionsPerOrigin }),
      ...(policy.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: policy.keepAliveTimeoutMs }),
    });
  }

  /**
   * What refuses this URL before any lookup (scheme, an unlisted host, a non-public IP literal, a refused origin);
   * undefined when it may be tried.
   */
  urlProblem(url: URL): string | undefined {
    const { variable } = this.#policy;
    if (url.protocol !== "http:" && url.protocol !== "https:") return "the URL is not http:// or https://";
    if (this.#policy.hosts === "listed" && this.#allow.empty) return `${variable} is not set`;
    const mustBeListed = this.#policy.hosts === "listed" || this.#allow.hasNames;
    if (mustBeListed && !this.#allow.hostAllowed(url.hostname)) return `the URL's host is not listed in ${variable}`;
    const refused = this.#policy.refusedOrigins?.() ?? [];
    if (refused.some((origin) => sameOrigin(origin, url))) return "the URL points at this service itself";
    const literal = canonicalAddress(url.hostname);
    if (literal !== undefined && !this.#allow.addressAllowed(literal)) {
      return `the URL's host is ${kindOf(literal)}, not allowed unless ${variable} lists it`;
    }
    return undefined;
  }

  /**
   * urlProblem, then the addresses the host resolves to now (at configuration time; connections check again, since
   * DNS answers change). A name that does not resolve passes here: it is refused or allowed when connecting.
   */
  async check(url: URL): Promise<string | undefined> {
    const problem = this.urlProblem(url);
    if (problem !== undefined || canonicalAddress(url.hostname) !== undefined) return problem;
    try {
      await this.#resolve(url.hostname);
      return undefined;
    } catch (e) {
      return outboundRefusal(e)?.message;
    }
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }

  /** The one address to connect to: a checked literal, or the first of the name's addresses if all are allowed. */
  async #resolve(hostname: string): Promise<string> {
    const { variable } = this.#policy;
    const literal = canonicalAddress(hostname);
    if (literal !== undefined) {
      if (this.#allow.addressAllowed(literal)) return hostname.replace(/^\[|\]$/g, "");
      throw new OutboundRefused(`the URL's host is ${kindOf(literal)}, not allowed unless ${variable} lists it`);
    }
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(hostname, { all: true }, (err, found) => (err === null ? resolve(found) : reject(err))),
    );
    const refused = addresses.find((a) => !this.#allow.addressAllowed(a.address));
    if (refused !== undefined) {
      throw new OutboundRefused(
        `the URL's host resolves to ${kindOf(refused.address)}, not allowed unless ${variable} lists it`,
      );
    }
    const [first] = addresses;
    if (first === undefined) throw new OutboundRefused("the URL's host resolves to no address");
    return first.address;
  }
}

/** Whether `url` points at `origin` (scheme, host in any numeric spelling, port). */
export function sameOrigin(origin: string, url: URL): boolean {
  try {
    const own = new URL(origin);
    const host = (u: URL) => canonicalAddress(u.hostname) ?? u.hostname.toLowerCase().replace(/\.$/, "");
    return own.protocol === url.protocol && own.port === url.port && host(own) === host(url);
  } catch {
    return false;
  }
}
