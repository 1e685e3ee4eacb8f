/**
 * What every store of text a person may read (the request log, the webhook event log, log lines) does with secrets:
 * recognise them by the name they are kept under, in any case and spacing, and replace them with REDACTED.
 */

/** What stands in for a secret in the request log, the event log, the audit trail and log lines. */
export const REDACTED = "[redacted]";

/** Keys whose values are secrets wherever they appear: passwords, bearer tokens, shared secrets, keys, cookies. */
const SECRET_KEY =
  /pass(word|wd)?$|pwd$|secret|token|authorization|credential|cookie|^api[_-]?key$|apikey|raw_?key|private_?key|^key$/;
/** A cheap pre-check: a text without any of these cannot hold a secret-named key (`/iu`: case-folded like `K`). */
export const MAYBE_SECRET = /pass|pwd|secret|token|authori[sz]ation|credential|cookie|key/iu;

/**
 * Whether a key names a secret. Compared the way SCIM compares attribute names (lower-cased, RFC 7643 §2.1), after
 * trimming the whitespace a PATCH path may carry.
 */
export const isSecretKey = (key: string): boolean => SECRET_KEY.test(key.trim().toLowerCase());

/** A JSON value with the value of every secret-named key replaced, at any depth. */
export function redactJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactJson);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    out[key] = isSecretKey(key) ? REDACTED : redactJson(v);
  }
  return out;
}

/** Headers that carry credentials whatever their value looks like. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token)$/;

/** Headers with the values of credential headers (and of any secret-named one) replaced. */
export function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.trim().toLowerCase();
    out[name] = CREDENTIAL_HEADER.test(lower) || isSecretKey(lower) ? REDACTED : value;
  }
  return out;
}

/** `name=value`, `name: value`, `"name": "value"` where the name holds a secret word, and `Bearer …`. */
const SECRET_ASSIGNMENT =
  /(["']?)([\w.-]*(?:pass(?:word|wd)?|pwd|secret|token|authori[sz]ation|credential|cookie|api[_-]?key|private[_-]?key)[\w.-]*)\1(\s*[:=]\s*)("(?:[^"\\]|\\.)*"?|'[^']*'?|[^\s&;,}"]+)/giu;
const BEARER = /\b(bearer|basic)\s+[\w.~+/=-]+/giu;

/**
 * Free text that may hold secrets (a webhook receiver's answer): JSON is redacted by key; anything else, or JSON cut
 * short, has its `secret-name = value` assignments and bearer credentials replaced.
 */
export function redactText(text: string): string {
  if (!MAYBE_SECRET.test(text) && !/bearer|basic/i.test(text)) return text;
  let out = text;
  try {
    out = JSON.stringify(redactJson(JSON.parse(text)));
  } catch {
    // Not JSON, or JSON cut short: the assignments below still find what it holds.
  }
  // Also inside JSON strings (`{"message": "db_password=…"}`); a bare value stops at a quote, so JSON stays JSON.
  return out
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(SECRET_ASSIGNMENT, (_m, q: string, name: string, sep: string, value: string) => {
      const quote = value.startsWith('"') ? '"' : value.startsWith("'") ? "'" : "";
      return `${q}${name}${q}${sep}${quote}${REDACTED}${quote}`;
    });
}
