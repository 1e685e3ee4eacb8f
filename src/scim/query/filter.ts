import type { FilterNode, Literal } from "../../directory/search/types.js";
import { isUuid } from "../../platform/ids.js";
import { ScimError } from "../errors.js";
import { MAX_FILTER_BYTES } from "../limits.js";
import { CORE_REGISTRY, findAttribute, type SchemaRegistry } from "../schema/registry.js";
import { type AttributeDefinition, isFilterable } from "../schema/types.js";
import { fieldOf, filterableNames, type ResolvedField, resolveField } from "./fields.js";
import { NUMBER_RE, type Token, tokenize } from "./filter-tokens.js";

export type ResourceKind = "User" | "Group";

/** A client's indexed extension attribute by schema URN (undefined: any) and name, case-insensitively. */
export type ExtensionFilterLookup = (
  urn: string | undefined,
  name: string,
) => { readonly key: string; readonly caseExact: boolean } | undefined;

const SUPPORTED =
  "supported: eq ne co sw ew gt ge lt le pr, and/or/not, parentheses and value paths " +
  '(emails[type eq "work"].value eq "…") on the filterable attributes of /Schemas';

const COMPARE = new Set(["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"]);
const ORDERED = new Set(["eq", "ne", "gt", "ge", "lt", "le"]);
const DATE_TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

const failure = (reason: string, hint = SUPPORTED): ScimError =>
  new ScimError(400, "invalidFilter", `${reason}: ${hint}`);

/**
 * RFC 7644 §3.4.2.2 filters, parsed into the directory's FilterNode. Attributes resolve through the client's schema
 * registry (the one list of what exists and what is filterable); values are checked against the attribute's type,
 * so what the store receives always compares.
 */
export function parseFilter(
  kind: ResourceKind,
  raw: string,
  registry: SchemaRegistry = CORE_REGISTRY,
  indexed?: ExtensionFilterLookup,
): FilterNode {
  if (Buffer.byteLength(raw, "utf8") > MAX_FILTER_BYTES) {
    throw failure(`filter is longer than ${MAX_FILTER_BYTES} bytes`);
  }
  const parser = new Parser(kind, tokenize(raw, failure), registry, indexed);
  if (parser.atEnd()) throw failure("filter is empty");
  const node = parser.or();
  if (!parser.atEnd()) throw failure(`unexpected ${parser.describeNext()}`);
  return node;
}

class Parser {
  #at = 0;

  constructor(
    readonly kind: ResourceKind,
    readonly tokens: readonly Token[],
    readonly registry: SchemaRegistry,
    readonly indexed: ExtensionFilterLookup | undefined,
  ) {}

  atEnd(): boolean {
    return this.#at >= this.tokens.length;
  }

  describeNext(): string {
    const tok = this.tokens[this.#at];
    if (tok === undefined) return "end of filter";
    if (tok.t === "word") return `"${tok.text}"`;
    if (tok.t === "string") return `string ${JSON.stringify(tok.value)}`;
    return `"${tok.t}"`;
  }

  #peekWord(): string | undefined {
    const tok = this.tokens[this.#at];
    return tok?.t === "word" ? tok.text.toLowerCase() : undefined;
  }

  #take(t: Token["t"]): boolean {
    if (this.tokens[this.#at]?.t !== t) return false;
    this.#at += 1;
    return true;
  }

  /** `or` binds loosest, then `and`, then `not` (RFC 7644 §3.4.2.2 precedence). */
  or(parent?: ResolvedField): FilterNode {
    return this.#joined("or", () => this.and(parent));
  }

  and(parent?: ResolvedField): FilterNode {
    return this.#joined("and", () => this.unary(parent));
  }

  /** One operand, or several joined by `op`: `a or b or c` is one node with three args. */
  #joined(op: "or" | "and", operand: () => FilterNode): FilterNode {
    const args = [operand()];
    while (this.#peekWord() === op) {
      this.#at += 1;
      args.push(operand());
    }
    return args.length === 1 ? (args[0] as FilterNode) : { op, args };
  }

  unary(parent?: ResolvedField): FilterNode {
    if (this.#peekWord() === "not") {
      this.#at += 1;
      if (!this.#take("(")) throw failure('"not" must be followed by a parenthesised filter');
      return { op: "not", arg: this.#closed(parent) };
    }
    if (this.#take("(")) return this.#closed(parent);
    return this.attributeExpression(parent);
  }

  #closed(parent?: ResolvedField): FilterNode {
    const inner = this.or(parent);
    if (!this.#take(")")) throw failure(`expected ")" but found ${this.describeNext()}`);
    return inner;
  }

  attributeExpression(parent?: ResolvedField): FilterNode {
    const tok = this.tokens[this.#at];
    if (tok?.t !== "word") throw failure(`expected an attribute name but found ${this.describeNext()}`);
    this.#at += 1;
    const resolved = this.#resolve(tok.text, parent);
    if (this.#take("[")) {
      if (parent !== undefined) throw failure("value paths cannot nest");
      if (!resolved.attribute.multiValued || resolved.attribute.type !== "complex" || resolved.sub !== undefined) {
        throw failure(`"${tok.text}" is not a multi-valued complex attribute`, "a value path filters one of those");
      }
      const where = this.or(resolved);
      if (!this.#take("]")) throw failure(`expected "]" but found ${this.describeNext()}`);
      const next = this.tokens[this.#at];
      // `emails[type eq "work"].value eq "…"` (as Entra ID sends it): the element matches both.
      if (next?.t === "word" && next.text.startsWith(".")) {
        this.#at += 1;
        const sub = this.#resolve(next.text.slice(1), resolved);
        const last = this.#comparison(sub, next.text.slice(1));
        return { op: "any", field: fieldOf(resolved), where: { op: "and", args: [where, last] } };
      }
      return { op: "any", field: fieldOf(resolved), where };
    }
    const node = this.#comparison(resolved, tok.text);
    // `emails.value eq "…"`, `members eq "…"`: some element of the multi-valued attribute matches.
    const whole = node.op === "pr" && resolved.sub === undefined;
    if (parent === undefined && !whole && resolved.attribute.multiValued && resolved.attribute.type === "complex") {
      return { op: "any", field: fieldOf({ ...resolved, sub: undefined }), where: node };
    }
    return node;
  }

  #resolve(text: string, parent?: ResolvedField): ResolvedField {
    if (parent !== undefined) {
      const sub = findAttribute(parent.attribute.subAttributes ?? [], text);
      if (sub === undefined) throw failure(`"${text}" is not a sub-attribute of ${parent.attribute.name}`);
      return this.#filterable(
        { ...parent, sub, filterable: isFilterable(sub) },
        `${parent.attribute.name}.${sub.name}`,
      );
    }
    const resolved = resolveField(this.kind, text, this.registry, this.indexed);
    if (resolved === undefined) throw this.#unknown(`unknown attribute "${text}"`);
    return this.#filterable(resolved, text);
  }

  #filterable(resolved: ResolvedField, text: string): ResolvedField {
    if (!resolved.filterable) throw this.#unknown(`attribute "${text}" is not filterable`);
    return resolved;
  }

  #unknown(reason: string): ScimError {
    const names = filterableNames(this.kind, this.registry);
    return failure(reason, `filterable attributes of ${this.kind}: ${names.join(", ")}; ${SUPPORTED}`);
  }

  /** `pr`, or a comparison whose value suits the attribute's type. */
  #comparison(resolved: ResolvedField, text: string): FilterNode {
    const opTok = this.tokens[this.#at];
    if (opTok?.t !== "word") throw failure(`expected an operator after "${text}" but found ${this.describeNext()}`);
    this.#at += 1;
    const op = opTok.text.toLowerCase();
    // Comparing a multi-valued complex attribute compares its `value` sub-attribute (RFC 7644 §3.4.2.2).
    const target =
      op !== "pr" && resolved.sub === undefined && resolved.attribute.type === "complex"
        ? this.#implicitValue(resolved, text)
        : resolved;
    const field = fieldOf(target);
    if (op === "pr") return { op: "pr", field };
    if (!COMPARE.has(op)) throw failure(`unknown operator "${opTok.text}"`);
    const value = this.#value(op);
    const definition = target.sub ?? target.attribute;
    checkOperand(definition, text, op, value);
    // An id of this service's resources (the registry's resourceId): an `eq` value must be one.
    if (definition.resourceId === true && op === "eq") {
      if (typeof value !== "string" || !isUuid(value)) {
        throw new ScimError(
          400,
          "invalidFilter",
          `the filter value for ${target.attribute.name}.value must be a valid UUID`,
        );
      }
      // A UUID's case carries no meaning (RFC 9562 §4); the lower-case form is canonical.
      return { op, field, value: value.toLowerCase() };
    }
    return { op: op as "eq", field, value };
  }

  #implicitValue(resolved: ResolvedField, text: string): ResolvedField {
    const value = resolved.attribute.multiValued
      ? findAttribute(resolved.attribute.subAttributes ?? [], "value")
      : undefined;
    if (value === undefined) {
      throw failure(
        `"${text}" is complex`,
        `name one of its sub-attributes, such as ${text}.${resolved.attribute.subAttributes?.[0]?.name ?? "value"}`,
      );
    }
    return this.#filterable({ ...resolved, sub: value, filterable: isFilterable(value) }, `${text}.value`);
  }

  #value(op: string): Literal {
    const tok = this.tokens[this.#at];
    if (tok === undefined || (tok.t !== "word" && tok.t !== "string")) throw failure(`missing value after "${op}"`);
    this.#at += 1;
    if (tok.t === "string") return tok.value;
    const word = tok.text.toLowerCase();
    if (word === "true" || word === "false") return word === "true";
    if (word === "null") throw failure("null is not a comparable value", 'use "pr" or "not (… pr)" for presence');
    if (NUMBER_RE.test(tok.text)) return Number(tok.text);
    throw failure(`the value "${tok.text}" must be a JSON string in double quotes, a number, true or false`);
  }
}

/** RFC 7644 §3.4.2.2: each operator on the types it is defined for, with a value of the attribute's type. */
function checkOperand(a: AttributeDefinition, text: string, op: string, value: Literal): void {
  const wrongValue = (expected: string) => failure(`"${text}" is ${a.type}: its value must be ${expected}`);
  switch (a.type) {
    case "string":
    case "reference":
      if (typeof value !== "string") throw wrongValue("a string in double quotes");
      return;
    case "boolean":
      if (op !== "eq" && op !== "ne") throw failure(`"${op}" does not apply to the boolean "${text}"`, "use eq or ne");
      if (typeof value !== "boolean") throw wrongValue("true or false");
      return;
    case "integer":
    case "decimal":
      if (!ORDERED.has(op)) throw failure(`"${op}" does not apply to the number "${text}"`, "use eq ne gt ge lt le");
      if (typeof value !== "number") throw wrongValue("a number");
      return;
    case "dateTime":
      if (!ORDERED.has(op)) throw failure(`"${op}" does not apply to the dateTime "${text}"`, "use eq ne gt ge lt le");
      if (typeof value !== "string" || !DATE_TIME_RE.test(value) || Number.isNaN(Date.parse(value))) {
        throw wrongValue('an RFC 3339 date-time in double quotes, e.g. "2026-01-31T12:00:00Z"');
      }
      return;
    default:
      throw failure(`"${text}" cannot be compared`, "name one of its sub-attributes");
  }
}
