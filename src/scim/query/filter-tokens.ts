/** The tokens of a SCIM filter (RFC 7644 §3.4.2.2): words, JSON string literals, parentheses and brackets. */
export type Token =
  | { readonly t: "(" | ")" | "[" | "]" }
  | { readonly t: "word"; readonly text: string }
  | { readonly t: "string"; readonly value: string };

/** Splits on whitespace, parentheses and brackets; string literals follow JSON (RFC 7644 §3.4.2.2 refers to RFC 7159). */
export function tokenize(raw: string, fail: (reason: string, hint?: string) => Error): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < raw.length) {
    const ch = raw.charAt(i);
    if (/\s/.test(ch)) {
      i += 1;
    } else if (ch === "(" || ch === ")" || ch === "[" || ch === "]") {
      tokens.push({ t: ch });
      i += 1;
    } else if (ch === '"') {
      const end = closingQuote(raw, i);
      if (end < 0) throw fail("unterminated string literal");
      tokens.push({ t: "string", value: decodeString(raw.slice(i, end + 1), fail) });
      i = end + 1;
    } else {
      let end = i;
      while (end < raw.length && !/[\s()[\]"]/.test(raw.charAt(end))) end += 1;
      tokens.push({ t: "word", text: raw.slice(i, end) });
      i = end;
    }
  }
  return tokens;
}

function closingQuote(raw: string, open: number): number {
  for (let i = open + 1; i < raw.length; i += 1) {
    const ch = raw.charAt(i);
    if (ch === "\\") i += 1;
    else if (ch === '"') return i;
  }
  return -1;
}

function decodeString(literal: string, fail: (reason: string, hint?: string) => Error): string {
  let value: unknown;
  try {
    value = JSON.parse(literal);
  } catch {
    throw fail(`malformed string literal ${literal}`, "use JSON string escapes");
  }
  // PostgreSQL text cannot hold NUL, and lone surrogates are not valid UTF-8.
  if (typeof value !== "string" || value.includes("\u0000") || /[\uD800-\uDFFF]/u.test(value)) {
    throw fail("the string value contains characters that cannot be stored");
  }
  return value;
}

/** RFC 7159 numbers, the only unquoted values besides true, false and null. */
export const NUMBER_RE = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
