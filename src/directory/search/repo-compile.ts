import { type RawBuilder, type SqlBool, sql } from "kysely";
import { isUuid } from "../../platform/ids.js";
import { type FieldRef, type FilterNode, type Literal, UnsupportedFilterError } from "./types.js";

type Sql = RawBuilder<unknown>;
type Bool = RawBuilder<SqlBool>;

/** A value kept in a column of the resource's row (or computed from it). */
export interface Column {
  readonly expr: Sql;
  readonly kind: "text" | "uuid" | "timestamptz" | "boolean";
  /** For a timestamp the index does not hold itself: the indexed column that holds it coarsened (see Coarse). */
  readonly coarse?: Coarse;
}

/**
 * An indexed column that holds a timestamp column's value coarsened by a monotonic function (`of`, in SQL): every
 * comparison of the timestamp implies one of the coarse values, which the index serves, and an order by the coarse
 * value then the timestamp is the timestamp's order.
 */
export interface Coarse {
  readonly column: Sql;
  of(value: Sql): Sql;
}

/**
 * Where one resource type keeps its attributes: what a repository tells the compiler. Attributes that are neither a
 * column nor a membership are read from the stored JSON document.
 */
export interface Storage {
  readonly id: Sql;
  column(field: FieldRef): Column | undefined;
  /** The jsonb object that holds the attribute `field.name` (the document, or its extension object). */
  container(field: FieldRef): Sql;
  /** A multi-valued attribute kept as rows (members, groups): the subquery of its values, one uuid column `value`. */
  membership(field: FieldRef): Sql | undefined;
  /**
   * For `eq` on an attribute an index answers: a condition the index serves, added to the exact test. Written as
   * `id = any(array(…))`, an index condition on the resource's key, so that inside an `or` it joins a bitmap OR.
   */
  indexHint(field: FieldRef, value: string): Bool | undefined;
}

/** The core attributes a resource keeps in its row: `meta`'s three sub-attributes and top-level columns by name. */
export interface CoreColumns {
  readonly meta: {
    readonly created: Sql;
    readonly lastModified: Sql;
    readonly lastModifiedCoarse?: Coarse;
    readonly resourceType: Sql;
  };
  readonly attributes: ReadonlyMap<string, Column>;
}

/** The column of a core attribute the resource keeps in its row; undefined: read it from the stored document. */
export function coreColumn(field: FieldRef, columns: CoreColumns): Column | undefined {
  if (!field.core) return undefined;
  if (field.name === "meta") {
    if (field.sub === "created") return { expr: columns.meta.created, kind: "timestamptz" };
    if (field.sub === "lastModified") {
      const coarse = columns.meta.lastModifiedCoarse;
      return { expr: columns.meta.lastModified, kind: "timestamptz", ...(coarse === undefined ? {} : { coarse }) };
    }
    if (field.sub === "resourceType") return { expr: columns.meta.resourceType, kind: "text" };
    return undefined;
  }
  return field.sub === undefined ? columns.attributes.get(field.name) : undefined;
}

/** A JSON value: as jsonb, and as text (->>). */
export interface Json {
  readonly json: Sql;
  readonly text: Sql;
}

type Element = { readonly field: FieldRef; readonly json: Sql } | { readonly field: FieldRef; readonly member: Sql };

const FALSE = sql<SqlBool>`false`;
const TRUE = sql<SqlBool>`true`;
const EMPTY = sql`'[]'::jsonb`;
export const arrayOf = (json: Sql) => sql`case when jsonb_typeof(${json}) = 'array' then ${json} else ${EMPTY} end`;
export const keyOf = (parent: Sql, key: string): Json => ({
  json: sql`(${parent} -> ${key}::text)`,
  text: sql`(${parent} ->> ${key}::text)`,
});
const sameAttribute = (a: FieldRef, b: FieldRef) => a.schema === b.schema && a.name === b.name;

/** The filter as one SQL condition over the resource's row; SQL nulls count as false (see `not`). */
export function compileFilter(node: FilterNode, storage: Storage, element?: Element): Bool {
  switch (node.op) {
    case "and":
    case "or":
      return sql<SqlBool>`(${sql.join(
        node.args.map((a) => compileFilter(a, storage, element)),
        node.op === "and" ? sql` and ` : sql` or `,
      )})`;
    case "not":
      // An absent attribute makes a comparison null: `not (title eq "x")` must still match it.
      return sql<SqlBool>`(not coalesce(${compileFilter(node.arg, storage, element)}, false))`;
    case "any":
      return anyElement(node.field, node.where, storage);
    case "pr":
      return present(node.field, storage, element);
    default:
      return compare(node.field, node.op, node.value, storage, element);
  }
}

function anyElement(field: FieldRef, where: FilterNode, storage: Storage): Bool {
  const members = storage.membership(field);
  if (members !== undefined) {
    const inner = compileFilter(where, storage, { field, member: sql`m.value` });
    return sql<SqlBool>`exists (select 1 from (${members}) as m where ${inner})`;
  }
  const e = sql`e.v`;
  const inner = compileFilter(where, storage, { field, json: e });
  const exact = sql<SqlBool>`exists (select 1 from jsonb_array_elements(${arrayOf(keyOf(storage.container(field), field.name).json)}) as e(v)
    where ${inner})`;
  const eqValue = equalityOnValue(where);
  const hint = eqValue === undefined ? undefined : storage.indexHint({ ...field, sub: "value" }, eqValue);
  return hint === undefined ? exact : sql<SqlBool>`(${hint} and ${exact})`;
}

/** The value of an `eq` on the `value` sub-attribute that the element test requires (a conjunct of it), if any. */
function equalityOnValue(node: FilterNode): string | undefined {
  if (node.op === "eq" && node.field.sub === "value" && typeof node.value === "string") return node.value;
  if (node.op === "and")
    for (const a of node.args) {
      const found = equalityOnValue(a);
      if (found !== undefined) return found;
    }
  return undefined;
}

/** Where a leaf reads its value: an element of a value path, a column, a membership, or the document. */
function source(field: FieldRef, storage: Storage, element?: Element): Column | Json | "member" {
  if (element !== undefined && sameAttribute(element.field, field) && field.sub !== undefined) {
    if ("member" in element) {
      if (field.sub !== "value") throw unsupportedMembership(field);
      return { expr: element.member, kind: "uuid" };
    }
    return keyOf(element.json, field.sub);
  }
  const column = storage.column(field);
  if (column !== undefined) return column;
  if (storage.membership(field) !== undefined) return "member";
  const top = keyOf(storage.container(field), field.name);
  return field.sub === undefined ? top : keyOf(top.json, field.sub);
}

const unsupportedMembership = (field: FieldRef) =>
  new UnsupportedFilterError(
    `${field.name} supports "pr" and "eq" on its value (${field.name} eq "<id>", ${field.name}[value eq "<id>"])`,
  );

function present(field: FieldRef, storage: Storage, element?: Element): Bool {
  const from = source(field, storage, element);
  if (from === "member") return sql<SqlBool>`exists (${storage.membership(field)})`;
  if ("kind" in from)
    return from.kind === "text"
      ? sql<SqlBool>`coalesce(${from.expr} <> '', false)`
      : sql<SqlBool>`(${from.expr} is not null)`;
  // RFC 7644 §3.4.2.2: pr is a non-empty value, or a complex value with some non-empty member.
  return sql<SqlBool>`coalesce(${from.json} not in ('null'::jsonb, '""'::jsonb, '[]'::jsonb, '{}'::jsonb), false)`;
}

function compare(field: FieldRef, op: string, value: Literal, storage: Storage, element?: Element): Bool {
  if (op === "eq" && field.indexKey !== undefined && typeof value === "string" && element === undefined) {
    const hint = storage.indexHint(field, field.caseExact ? value : value.toLowerCase());
    if (hint !== undefined) return hint;
  }
  const from = source(field, storage, element);
  if (from === "member") throw unsupportedMembership(field);
  if ("kind" in from) return compareColumn(from, field, op, value);
  if (field.multiValued && field.sub === undefined && element === undefined) {
    // A multi-valued simple attribute: some value matches.
    const inner = compareJson({ json: sql`x.v`, text: sql`(x.v #>> '{}')` }, field, op, value);
    return sql<SqlBool>`exists (select 1 from jsonb_array_elements(${arrayOf(from.json)}) as x(v) where ${inner})`;
  }
  return compareJson(from, field, op, value);
}

function compareColumn(column: Column, field: FieldRef, op: string, value: Literal): Bool {
  switch (column.kind) {
    case "uuid":
      if (op === "eq" || op === "ne") {
        if (typeof value !== "string" || !isUuid(value)) return op === "eq" ? FALSE : TRUE;
        return sql<SqlBool>`(${column.expr} ${sql.raw(op === "eq" ? "=" : "<>")} ${value.toLowerCase()}::uuid)`;
      }
      return compareText(sql`${column.expr}::text`, field.caseExact, op, String(value));
    case "timestamptz": {
      const at = sql`${String(value)}::timestamptz`;
      const exact = sql<SqlBool>`(${column.expr} ${ordering(op)} ${at})`;
      const range = column.coarse === undefined ? undefined : coarseRange(column.coarse, op, at);
      return range === undefined ? exact : sql<SqlBool>`(${range} and ${exact})`;
    }
    case "boolean":
      return sql<SqlBool>`(${column.expr} ${ordering(op)} ${value === true})`;
    default:
      return compareText(column.expr, field.caseExact, op, String(value));
  }
}

/** The coarse values a comparison `op` with `at` implies (none for `ne`): what the coarse column's index serves. */
function coarseRange(coarse: Coarse, op: string, at: Sql): Bool | undefined {
  const symbol = { gt: ">=", ge: ">=", lt: "<=", le: "<=", eq: "=" }[op];
  return symbol === undefined ? undefined : sql<SqlBool>`(${coarse.column} ${sql.raw(symbol)} ${coarse.of(at)})`;
}

function compareJson(from: Json, field: FieldRef, op: string, value: Literal): Bool {
  switch (field.type) {
    case "boolean":
      return sql<SqlBool>`(${from.json} ${ordering(op)} to_jsonb(${value === true}::boolean))`;
    case "number":
      return sql<SqlBool>`((case when jsonb_typeof(${from.json}) = 'number' then ${from.text}::numeric end) ${ordering(op)} ${String(value)}::numeric)`;
    case "dateTime":
      return sql<SqlBool>`(${dateTimeOf(from.text)} ${ordering(op)} ${String(value)}::timestamptz)`;
    default:
      return compareText(from.text, field.caseExact, op, String(value));
  }
}

/** A stored dateTime (validated as RFC 3339 on write); anything else reads as absent rather than failing the query. */
export const dateTimeOf = (text: Sql) =>
  sql`(case when ${text} ~ '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}' then ${text}::timestamptz end)`;

const ORDERING: Record<string, string> = { eq: "=", ne: "<>", gt: ">", ge: ">=", lt: "<", le: "<=" };
function ordering(op: string): Sql {
  const symbol = ORDERING[op];
  if (symbol === undefined) throw new UnsupportedFilterError(`"${op}" does not apply here`);
  return sql.raw(symbol);
}

/** RFC 7644 §3.4.2.2 on strings: caseExact compares as stored, otherwise both sides lower-cased. */
function compareText(text: Sql, caseExact: boolean, op: string, value: string): Bool {
  const left = caseExact ? text : sql`lower(${text})`;
  const right = caseExact ? sql`${value}::text` : sql`lower(${value}::text)`;
  switch (op) {
    case "co":
      return sql<SqlBool>`(strpos(${left}, ${right}) > 0)`;
    case "sw":
      return sql<SqlBool>`starts_with(${left}, ${right})`;
    case "ew":
      return sql<SqlBool>`(right(${left}, ${[...value].length}::int) = ${right})`;
    default:
      return sql<SqlBool>`(${left} ${ordering(op)} ${right})`;
  }
}
