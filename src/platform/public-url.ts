import { isIP } from "node:net";

/**
 * What keeps an IdP from using the SCIM base URL Roster hands out under `base`: a loopback host (no IdP outside this
 * machine reaches it) or plain HTTP (Okta's and Entra's connection tests need HTTPS). Each warning says what to set.
 */
export function publicUrlWarnings(base: string): string[] {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return [];
  }
  const warnings: string[] = [];
  const example = `${base}/scim/<client_id>/v2`;
  if (isLoopback(url.hostname)) {
    warnings.push(
      `The SCIM base URL an IdP is given (${example}) is a loopback address that no IdP outside this machine can ` +
        "reach: set ROSTER_PUBLIC_URL to the https:// address the IdP reaches (docs/deploying.md).",
    );
  }
  if (url.protocol === "http:") {
    warnings.push(
      `The SCIM base URL an IdP is given (${example}) is plain HTTP: Okta and Entra need HTTPS. Serve TLS ` +
        "(ROSTER_TLS_CERT and ROSTER_TLS_KEY) or run behind a TLS reverse proxy (ROSTER_TRUST_PROXY), and set " +
        "ROSTER_PUBLIC_URL=https://… (docs/deploying.md).",
    );
  }
  return warnings;
}

/** A host name or address that only this machine reaches (the unspecified addresses included: no one dials them). */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.") || host === "0.0.0.0";
  if (isIP(host) === 6) return host === "::1" || host === "::" || /^::ffff:127\./.test(host);
  return false;
}
