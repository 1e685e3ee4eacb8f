import { isUuid } from "../../platform/ids.js";
import { ScimError } from "../errors.js";
import { MAX_FILTER_BYTES } from "../limits.js";

export type ResourceKind = "User" | "Group";

export type EqFilter =
  | {
      attribute: "userName" | "externalId" | "employeeNumber" | "groups.value" | "displayName";
      value: string;
    }
  | {
      /** A declared extension attribute served by the extension index (docs/scim-extensions.md). */
      attribute: "extension";
      /** The index's attribute key (see IndexedAttribute). */
      key: string;
      caseExact: boolean;
      value: string;
    };

type FilterAttribute = Exclude<EqFilter["attribute"], "extension">;

/** A client's filterable extension attribute by schema URN (undefined: any) and name, case-insensitively. */
export type ExtensionFilterLookup = (
  urn: string | undefined,
  name: string,
) => { readonly key: string; readonly caseExact: boolean } | undefined;

const CORE_USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE_USER = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const CORE_GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";

/** The indexed attributes, each with the one schema URN that may qualify it. */
const FILTERABLE: Record<ResourceKind, readonly { name: FilterAttribute; schema: string }[]> = {
  User: [
    { name: "userName", schema: CORE_USER },
    { name: "externalId", schema: CORE_USER },
    { name: "employeeNumber", schema: ENTERPRISE_USER },
    { name: "groups.value", schema: CORE_USER },
  ],
  Group: [
    { name: "displayName", schema: CORE_GROUP },
    { name: "externalId", schema: CORE_GROUP },
  ],
};

const OTHER_OPERATORS = new Set(["ne", "co", "sw", "ew", "pr", "gt", "ge", "lt", "le"]);
const LOGICAL = new Set(["and", "or", "not"]);
const SUPPORTED_FORM = 'only filters of the form <attribute> eq "<string>" are supported';

type Token = { t: "lparen" } | { t: "rparen" } | { t: "word"; text: string } | { t: "string"; value: string };

const invalid = (kind: ResourceKind, reason: string, hint = SUPPORTED_FORM): ScimError =>
  new ScimError(
    400,
    "invalidFilter",
    `${reason}: ${hint}; supported attributes for ${kind}: ${FILTERABLE[kind].map((a) => a.name).join(", ")}`,
  );

/**
 * The narrow eq-only subset of RFC 7644 §3.4.2.2. Every supported attribute is a string, so the value must be
 * a JSON string literal; unquoted true/false/null/numbers are invalidFilter rather than coerced.
 */
export function parseFilter(kind: ResourceKind, raw: string, extensions?: ExtensionFilterLookup): EqFilter {
  if (Buffer.byteLength(raw, "utf8") > MAX_FILTER_BYTES) {
    throw invalid(kind, `filter is longer than ${MAX_FILTER_BYTES} bytes`);
  }
  const tokens = stripOuterParens(kind, tokenize(kind, raw));
  if (tokens.length === 0) throw invalid(kind, "filter is empty");

  // RFC 7644 §3.4.2.2 logical operators; index 2 is the value slot, where a bare word gets its own error below.
  if (tokens.some((tok, i) => i !== 2 && tok.t === "word" && LOGICAL.has(tok.text.toLowerCase()))) {
    throw invalid(
      kind,
      "logical operators (and, or, not) are not supported",
      'a filter is a single <attribute> eq "<string>" expression',
    );
  }
  if (tokens.some((tok) => tok.t === "lparen" || tok.t === "rparen")) {
    throw invalid(kind, "parentheses are only allowed around the whole expression");
  }

  const [attrTok, opTok, valueTok, extra] = tokens;
  if (attrTok?.t !== "word") throw invalid(kind, "filter must start with an attribute name");
  const extension = extensions === undefined ? undefined : extensionAttribute(kind, attrTok.text, extensions);
  const attribute = extension === undefined ? resolveAttribute(kind, attrTok.text) : undefined;

  if (opTok?.t !== "word") throw invalid(kind, `expected an operator after "${attrTok.text}"`);
  const op = opTok.text.toLowerCase();
  if (op !== "eq") {
    const reason = OTHER_OPERATORS.has(op) ? "unsupported operator" : "unknown operator";
    throw invalid(kind, `${reason} "${opTok.text}"`, 'only "eq" is supported');
  }

  if (valueTok === undefined) throw invalid(kind, 'missing value after "eq"');
  if (valueTok.t !== "string") {
    throw invalid(kind, "the value must be a string in double quotes");
  }
  if (extra !== undefined) throw invalid(kind, "unexpected input after the value");

  if (extension !== undefined) {
    return { attribute: "extension", key: extension.key, caseExact: extension.caseExact, value: valueTok.value };
  }
  if (attribute === undefined) throw invalid(kind, `attribute "${attrTok.text}" is not filterable`);

  if (attribute === "groups.value") {
    if (!isUuid(valueTok.value)) {
      throw new ScimError(400, "invalidFilter", "the filter value for groups.value must be a valid UUID");
    }
    // A UUID's case carries no meaning (RFC 9562 §4); the lower-case form is canonical.
    return { attribute, value: valueTok.value.toLowerCase() };
  }
  return { attribute, value: valueTok.value };
}

/** Splits on whitespace and parentheses; string literals follow JSON (RFC 7644 §3.4.2.2 refers to RFC 7159). */
function tokenize(kind: ResourceKind, raw: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < raw.length) {
    const ch = raw.charAt(i);
    if (/\s/.test(ch)) {
      i += 1;
    } else if (ch === "(" || ch === ")") {
      tokens.push({ t: ch === "(" ? "lparen" : "rparen" });
      i += 1;
    } else if (ch === '"') {
      const end = closingQuote(raw, i);
      if (end < 0) throw invalid(kind, "unterminated string literal");
      tokens.push({ t: "string", value: decodeString(kind, raw.slice(i, end + 1)) });
      i = end + 1;
    } else {
      let end = i;
      while (end < raw.length && !/[\s()"]/.test(raw.charAt(end))) end += 1;
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

function decodeString(kind: ResourceKind, literal: string): string {
  let value: unknown;
  try {
    value = JSON.parse(literal);
  } catch {
    throw invalid(kind, `malformed string literal ${literal}`, "use JSON string escapes");
  }
  // PostgreSQL text cannot hold NUL, and lone surrogates are not valid UTF-8.
  if (typeof value !== "string" || value.includes("\u0000") || /[\uD800-\uDFFF]/u.test(value)) {
    throw invalid(kind, "the string value contains characters that cannot be stored");
  }
  return value;
}

/** Tolerates `( … )` around the whole single expression, nested any number of times. */
function stripOuterParens(kind: ResourceKind, tokens: Token[]): Token[] {
  let depth = 0;
  for (const tok of tokens) {
    if (tok.t === "lparen") depth += 1;
    if (tok.t === "rparen") depth -= 1;
    if (depth < 0) break;
  }
  if (depth !== 0) throw invalid(kind, "unbalanced parentheses");

  let rest = tokens;
  while (rest[0]?.t === "lparen" && matchingParen(rest) === rest.length - 1) rest = rest.slice(1, -1);
  return rest;
}

function matchingParen(tokens: readonly Token[]): number {
  let depth = 0;
  for (const [i, tok] of tokens.entries()) {
    if (tok.t === "lparen") depth += 1;
    if (tok.t === "rparen" && --depth === 0) return i;
  }
  return -1;
}

/** A declared extension attribute the filter names, unless a standard filterable attribute has that name. */
function extensionAttribute(kind: ResourceKind, text: string, lookup: ExtensionFilterLookup) {
  if (text.includes("[") || text.includes("]")) return undefined;
  const colon = text.lastIndexOf(":");
  const urn = colon < 0 ? undefined : text.slice(0, colon);
  const name = text.slice(colon + 1);
  if (urn === undefined && FILTERABLE[kind].some((a) => a.name.toLowerCase() === name.toLowerCase())) {
    return undefined;
  }
  return lookup(urn, name);
}

/** RFC 7643 §2.1: names are case-insensitive; an optional schema URN qualifies them (RFC 7644 §3.10). */
function resolveAttribute(kind: ResourceKind, text: string): FilterAttribute {
  if (text.includes("[") || text.includes("]")) {
    throw invalid(kind, `value filters such as "${text}" are not supported`);
  }
  const colon = text.lastIndexOf(":");
  const schema = colon < 0 ? undefined : text.slice(0, colon).toLowerCase();
  const name = text.slice(colon + 1).toLowerCase();

  const known = FILTERABLE[kind];
  if (schema !== undefined && !known.some((a) => a.schema.toLowerCase() === schema)) {
    const schemas = [...new Set(known.map((a) => a.schema))].join(", ");
    throw invalid(kind, `unsupported schema "${text.slice(0, colon)}"`, `supported schemas for ${kind}: ${schemas}`);
  }
  const match = known.find(
    (a) => a.name.toLowerCase() === name && (schema === undefined || a.schema.toLowerCase() === schema),
  );
  if (match === undefined) {
    throw invalid(kind, `attribute "${text}" is not filterable`, "only eq on indexed attributes is supported");
  }
  return match.name;
}
