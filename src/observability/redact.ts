/** What stands in for a secret in the request log, the audit trail and log lines. */
export const REDACTED = "[redacted]";
/** Request and response bodies are kept up to this many bytes of UTF-8; the rest is cut and flagged. */
export const MAX_LOGGED_BODY_BYTES = 64 * 1024;

/** Keys whose values are secrets wherever they appear: SCIM passwords, bearer tokens, shared secrets, raw keys. */
const SECRET_KEY = /pass(word)?$|secret|token|authorization|^api_?key$|raw_?key|^key$/i;
/** A cheap pre-check: a text without any of these cannot hold a secret-named key. */
const MAYBE_SECRET = /pass|secret|token|authorization|key/i;

export const isSecretKey = (key: string): boolean => SECRET_KEY.test(key);

/**
 * A JSON value with every secret replaced. A SCIM PATCH operation names its target in `path` and carries the new
 * value in `value` (RFC 7644 §3.5.2), so `{"path": "password", "value": "…"}` hides its value too.
 */
export function redactJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactJson);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  const record = value as Record<string, unknown>;
  const secretPath = typeof record.path === "string" && pathNamesSecret(record.path);
  for (const [key, v] of Object.entries(record)) {
    out[key] = isSecretKey(key) || (secretPath && key === "value") ? REDACTED : redactJson(v);
  }
  return out;
}

/** `password`, `urn:…:User:password`, `emails[type eq "work"].value` (not secret). */
function pathNamesSecret(path: string): boolean {
  const last = path.split(/[:.]/).pop() ?? path;
  return isSecretKey(last.replace(/\[.*$/, ""));
}

export interface LoggedBody {
  readonly text: string | null;
  readonly truncated: boolean;
}

const NO_BODY: LoggedBody = { text: null, truncated: false };

/**
 * A parsed request body as stored: redacted JSON text, cut at MAX_LOGGED_BODY_BYTES. Serialised as it is first (native,
 * no copy): a text without a secret-named key needs no redaction, and only the others are copied and redacted.
 */
export function loggedRequestBody(body: unknown): LoggedBody {
  if (body === undefined || body === null) return NO_BODY;
  const text = JSON.stringify(body);
  return cut(MAYBE_SECRET.test(text) ? JSON.stringify(redactJson(body)) : text);
}

/**
 * A response body as stored. Most hold nothing secret-named, and are kept as sent without being parsed again; the
 * others are parsed, redacted and serialised once more.
 */
export function loggedResponseBody(payload: unknown): LoggedBody {
  let text: string;
  if (typeof payload === "string") text = payload;
  else if (Buffer.isBuffer(payload)) text = payload.toString("utf8");
  else return NO_BODY;
  if (text === "") return NO_BODY;
  if (MAYBE_SECRET.test(text)) {
    try {
      text = JSON.stringify(redactJson(JSON.parse(text)));
    } catch {
      // Not JSON (a truncated or foreign body): keep nothing rather than something unredacted.
      return { text: REDACTED, truncated: false };
    }
  }
  return cut(text);
}

function cut(text: string): LoggedBody {
  // A UTF-16 unit is at most 3 bytes of UTF-8: short texts need no byte count.
  if (text.length * 3 <= MAX_LOGGED_BODY_BYTES) return { text, truncated: false };
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= MAX_LOGGED_BODY_BYTES) return { text, truncated: false };
  // toString drops a multi-byte character cut in half (it becomes U+FFFD at most).
  return { text: bytes.subarray(0, MAX_LOGGED_BODY_BYTES).toString("utf8"), truncated: true };
}

/** A query string with the values of secret-named parameters replaced (`?access_token=…`). */
export function redactQuery(query: string): string {
  if (query === "" || !MAYBE_SECRET.test(query)) return query;
  return query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // keep the raw name
      }
      return eq >= 0 && isSecretKey(decoded) ? `${name}=${REDACTED}` : pair;
    })
    .join("&");
}
