import { isSecretKey, MAYBE_SECRET, REDACTED } from "../platform/redact.js";

export { isSecretKey, REDACTED, redactJson } from "../platform/redact.js";

/** Request and response bodies are kept up to this many bytes of UTF-8; the rest is cut and flagged. */
export const MAX_LOGGED_BODY_BYTES = 64 * 1024;

/**
 * How the request log finds secrets in one client's bodies. The SCIM layer supplies one that reads bodies the way
 * it parses them (PATCH paths, the client's schema); without one, secrets are found by key name alone.
 */
export interface BodyRedactor {
  /** A pattern every text holding a secret of this client matches: a body that does not match is kept as it is. */
  suspect(client: object): RegExp;
  /** A parsed body of a request to `url` with every secret replaced. */
  redact(client: object, url: string, body: unknown): unknown;
}

/**
 * Without a protocol's rules: secret-named keys, and the `value` of an object whose `path` ends in a secret-named
 * attribute (`{"Path": "urn:…:User:password ", "VALUE": "…"}`), keys compared in any case.
 */
export const KEY_REDACTOR: BodyRedactor = {
  suspect: () => MAYBE_SECRET,
  redact: (_client, _url, body) => redactByKeyAndPath(body),
};

function redactByKeyAndPath(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactByKeyAndPath);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const secretPath = entries.some(
    ([k, v]) => k.trim().toLowerCase() === "path" && typeof v === "string" && pathNamesSecret(v),
  );
  const out: Record<string, unknown> = {};
  for (const [key, v] of entries) {
    out[key] =
      isSecretKey(key) || (secretPath && key.trim().toLowerCase() === "value") ? REDACTED : redactByKeyAndPath(v);
  }
  return out;
}

/** `password`, `urn:…:User:password`, `emails[type eq "work"].value` (not secret). */
function pathNamesSecret(path: string): boolean {
  const last = path.trim().split(/[:.]/).pop() ?? path;
  return isSecretKey(last.replace(/\[.*$/, ""));
}

export interface LoggedBody {
  readonly text: string | null;
  readonly truncated: boolean;
}

const NO_BODY: LoggedBody = { text: null, truncated: false };

/** What a body is redacted for: the client and the URL it was sent to, and the rules. */
export interface RedactionContext {
  readonly client: object;
  readonly url: string;
  readonly redactor: BodyRedactor;
}

const KEY_ONLY: RedactionContext = { client: {}, url: "", redactor: KEY_REDACTOR };

/**
 * A parsed request body as stored: redacted JSON text, cut at MAX_LOGGED_BODY_BYTES. Serialised as it is first (native,
 * no copy): a text the client's pattern does not match holds no secret, and only the others are copied and redacted.
 */
export function loggedRequestBody(body: unknown, c: RedactionContext = KEY_ONLY): LoggedBody {
  if (body === undefined || body === null) return NO_BODY;
  const text = JSON.stringify(body);
  if (text === undefined) return NO_BODY;
  return cut(c.redactor.suspect(c.client).test(text) ? JSON.stringify(c.redactor.redact(c.client, c.url, body)) : text);
}

/**
 * A response body as stored. Most hold nothing secret-named, and are kept as sent without being parsed again; the
 * others are parsed, redacted and serialised once more.
 */
export function loggedResponseBody(payload: unknown, c: RedactionContext = KEY_ONLY): LoggedBody {
  let text: string;
  if (typeof payload === "string") text = payload;
  else if (Buffer.isBuffer(payload)) text = payload.toString("utf8");
  else return NO_BODY;
  if (text === "") return NO_BODY;
  if (c.redactor.suspect(c.client).test(text)) {
    try {
      text = JSON.stringify(c.redactor.redact(c.client, c.url, JSON.parse(text)));
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

const STRING_LITERAL = /"(?:[^"\\]|\\.)*"?/g;

/**
 * A query string with the values of secret-named parameters replaced (`?access_token=…`), and the string literals of
 * a `filter` that names a secret (`password eq "…"`: refused, but what was tried may be a real password).
 */
export function redactQuery(query: string, suspect: RegExp = MAYBE_SECRET): string {
  if (query === "" || !suspect.test(safeDecode(query))) return query;
  return query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const name = safeDecode(pair.slice(0, eq));
      if (isSecretKey(name)) return `${pair.slice(0, eq)}=${REDACTED}`;
      if (name.trim().toLowerCase() !== "filter") return pair;
      const filter = safeDecode(pair.slice(eq + 1));
      if (!suspect.test(filter)) return pair;
      return `${pair.slice(0, eq)}=${encodeURIComponent(filter.replace(STRING_LITERAL, `"${REDACTED}"`))}`;
    })
    .join("&");
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return text;
  }
}
