import { badRequest, ScimError } from "../errors.js";
import {
  CORE_REGISTRY,
  canonicalSchemaUrn,
  findAttribute,
  type ResourceName,
  resolveAttribute,
  type SchemaRegistry,
  splitSchemaPrefix,
} from "../schema/registry.js";
import type { AttributeDefinition } from "../schema/types.js";
import type { FilterTerm, FilterValue, PatchPath } from "./types.js";

const ATTR_PATH = /^[A-Za-z$][\w$-]*(\.[A-Za-z$][\w$-]*)?$/;
const SUB_ATTR = /^\.([A-Za-z$][\w$-]*)$/;

const invalidPath = (raw: string, why: string): ScimError =>
  badRequest("invalidPath", `invalid PATCH path "${raw}": ${why}`);

type Token = { readonly kind: "word"; readonly text: string } | { readonly kind: "string"; readonly text: string };

/** Splits a value filter into words and JSON string literals. */
const tokenize = (text: string, raw: string): Token[] => {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === " ") {
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text.charAt(j) !== '"') j += text.charAt(j) === "\\" ? 2 : 1;
      if (j >= text.length) throw invalidPath(raw, "unterminated string in filter");
      try {
        tokens.push({ kind: "string", text: JSON.parse(text.slice(i, j + 1)) as string });
      } catch {
        throw invalidPath(raw, "bad string literal in filter");
      }
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && text.charAt(j) !== " " && text.charAt(j) !== '"') j++;
      tokens.push({ kind: "word", text: text.slice(i, j) });
      i = j;
    }
  }
  return tokens;
};

const literal = (token: Token, sub: AttributeDefinition, raw: string): FilterValue => {
  if (token.kind === "string") {
    if (sub.type === "boolean" && /^(true|false)$/i.test(token.text)) return token.text.toLowerCase() === "true";
    return token.text;
  }
  const word = token.text.toLowerCase();
  if (word === "true") return true;
  if (word === "false") return false;
  if (word === "null") return null;
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(token.text)) return Number(token.text);
  throw invalidPath(raw, `unsupported filter value ${token.text}`);
};

/** valFilter restricted to `subAttr eq value` terms joined by `and` (RFC 7644 §3.4.2.2; only eq is supported). */
const parseFilter = (text: string, attribute: AttributeDefinition, raw: string): FilterTerm[] => {
  const tokens = tokenize(text, raw);
  const terms: FilterTerm[] = [];
  let i = 0;
  for (;;) {
    const [name, op, value] = [tokens[i], tokens[i + 1], tokens[i + 2]];
    if (name?.kind !== "word" || op?.kind !== "word" || value === undefined) {
      throw invalidPath(raw, "filter must be `subAttribute eq value`");
    }
    if (op.text.toLowerCase() !== "eq") throw invalidPath(raw, `filter operator ${op.text} is not supported`);
    const sub = findAttribute(attribute.subAttributes ?? [], name.text);
    if (sub === undefined) throw invalidPath(raw, `${attribute.name} has no sub-attribute ${name.text}`);
    terms.push({ attribute: sub.name, value: literal(value, sub, raw) });
    i += 3;
    const next = tokens[i];
    if (next === undefined) return terms;
    if (next.kind !== "word" || next.text.toLowerCase() !== "and") {
      throw invalidPath(raw, "only `and` may join filter terms");
    }
    i++;
  }
};

/** Index of the "]" closing the filter opened at `open`, skipping string literals. */
const closingBracket = (raw: string, open: number): number => {
  let inString = false;
  for (let i = open + 1; i < raw.length; i++) {
    const c = raw.charAt(i);
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "]") return i;
  }
  return -1;
};

/**
 * Parses a PATCH path (RFC 7644 §3.5.2): `attr`, `attr.sub`, `attr[filter]`, `attr[filter].sub`, each optionally
 * URN-qualified. Unknown attributes are 400 invalidPath; an unsupported schema URN is 400 without scimType.
 */
export const parsePatchPath = (
  resource: ResourceName,
  path: string,
  registry: SchemaRegistry = CORE_REGISTRY,
): PatchPath => {
  const raw = path.trim();
  const open = raw.indexOf("[");
  let attrText = raw;
  let filterText: string | undefined;
  let subText: string | undefined;
  if (open >= 0) {
    const close = closingBracket(raw, open);
    if (close < 0) throw invalidPath(raw, "missing ]");
    attrText = raw.slice(0, open);
    filterText = raw.slice(open + 1, close).trim();
    const rest = raw.slice(close + 1);
    if (rest !== "") {
      const match = SUB_ATTR.exec(rest);
      if (match?.[1] === undefined) throw invalidPath(raw, "unexpected text after ]");
      subText = match[1];
    }
  }

  if (canonicalSchemaUrn(resource, attrText, registry) !== undefined) {
    throw invalidPath(raw, "names a schema, not an attribute");
  }
  const { urn, name } = splitSchemaPrefix(attrText);
  if (urn !== undefined && canonicalSchemaUrn(resource, urn, registry) === undefined) {
    throw new ScimError(400, undefined, `PATCH path "${raw}" references an unsupported schema ${urn}`);
  }
  if (!ATTR_PATH.test(name)) throw invalidPath(raw, "malformed attribute name");
  if (filterText !== undefined && name.includes(".")) throw invalidPath(raw, "a filter must follow an attribute");

  const resolved = resolveAttribute(resource, attrText, registry);
  if (resolved === undefined) throw invalidPath(raw, "unknown attribute");
  const { schema, attribute } = resolved;
  const base = { schema, attribute: attribute.name, definition: attribute };

  if (filterText === undefined) {
    return resolved.sub === undefined ? base : { ...base, sub: resolved.sub.name, subDefinition: resolved.sub };
  }
  if (!attribute.multiValued || attribute.type !== "complex") {
    throw invalidPath(raw, `${attribute.name} is not a multi-valued complex attribute`);
  }
  const filter = parseFilter(filterText, attribute, raw);
  if (subText === undefined) return { ...base, filter };
  const sub = findAttribute(attribute.subAttributes ?? [], subText);
  if (sub === undefined) throw invalidPath(raw, `${attribute.name} has no sub-attribute ${subText}`);
  return { ...base, filter, sub: sub.name, subDefinition: sub };
};
