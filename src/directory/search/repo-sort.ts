import { type RawBuilder, type SqlBool, sql } from "kysely";
import { arrayOf, type Coarse, dateTimeOf, type Json, keyOf, type Storage } from "./repo-compile.js";
import { type FieldRef, type SortSpec, UnsupportedFilterError } from "./types.js";

type Sql = RawBuilder<unknown>;
type Bool = RawBuilder<SqlBool>;

/** The ORDER BY of a sort, ties broken by id so that offsets are exact; absent values sort last either way. */
export function compileSort(sort: SortSpec, storage: Storage): Sql {
  const direction = sql.raw(sort.descending ? "desc nulls last" : "asc nulls last");
  const key = sortKey(sort.field, storage);
  const coarse = key.coarse === undefined ? sql`` : sql`${key.coarse.column} ${direction}, `;
  return sql`${coarse}${key.expr} ${direction}, ${storage.id} asc`;
}

/** A row's sort value as text, as a sorted cursor carries it (null when the row has none). */
export function sortValueOf(sort: SortSpec, storage: Storage): Sql {
  return sql`(${sortKey(sort.field, storage).expr})::text`;
}

/**
 * The rows after a position of the sort (`value` as sortValueOf gave it, null for a row without one, and its id):
 * a keyset in compileSort's order — values in the sort's direction, nulls last, ties by id ascending — so a sorted
 * listing pages by cursor without OFFSET, and a row changed between two pages neither repeats nor hides the rest.
 */
export function afterSortPosition(sort: SortSpec, storage: Storage, value: string | null, id: string): Bool {
  const key = sortKey(sort.field, storage);
  const after = sql<SqlBool>`${storage.id} > ${id}::uuid`;
  if (value === null) return sql<SqlBool>`(${key.expr} is null and ${after})`;
  const at = sql`${value}::${sql.raw(key.type)}`;
  const beyond = sql.raw(sort.descending ? "<" : ">");
  const rest = sql<SqlBool>`(${key.expr} ${beyond} ${at} or (${key.expr} = ${at} and ${after}))`;
  const inRange =
    key.coarse === undefined
      ? rest
      : sql<SqlBool>`(${key.coarse.column} ${sql.raw(sort.descending ? "<=" : ">=")} ${key.coarse.of(at)} and ${rest})`;
  return sql<SqlBool>`(${inRange} or ${key.expr} is null)`;
}

/** A sort key and its SQL type, which a cursor's text value is cast back to. */
interface SortKey {
  readonly expr: Sql;
  readonly type: "text" | "uuid" | "timestamptz" | "boolean" | "numeric";
  readonly coarse?: Coarse;
}

function sortKey(field: FieldRef, storage: Storage): SortKey {
  if (storage.membership(field) !== undefined) {
    throw new UnsupportedFilterError(
      `sortBy cannot name ${field.name}: sort by an attribute the resource holds itself`,
      "sort",
    );
  }
  const column = storage.column(field);
  if (column !== undefined) {
    if (column.kind === "text" && !field.caseExact) return { expr: sql`lower(${column.expr})`, type: "text" };
    return column.coarse === undefined
      ? { expr: column.expr, type: column.kind }
      : { expr: column.expr, type: column.kind, coarse: column.coarse };
  }
  const type: SortKey["type"] =
    field.type === "number"
      ? "numeric"
      : field.type === "dateTime"
        ? "timestamptz"
        : field.type === "boolean"
          ? "boolean"
          : "text";
  const typed = (from: Json): Sql => {
    if (field.type === "number")
      return sql`(case when jsonb_typeof(${from.json}) = 'number' then ${from.text}::numeric end)`;
    if (field.type === "dateTime") return dateTimeOf(from.text);
    if (field.type === "boolean")
      return sql`(case when jsonb_typeof(${from.json}) = 'boolean' then ${from.text}::boolean end)`;
    return field.caseExact ? from.text : sql`lower(${from.text})`;
  };
  const top = keyOf(storage.container(field), field.name);
  if (!field.multiValued) return { expr: typed(field.sub === undefined ? top : keyOf(top.json, field.sub)), type };
  // RFC 7644 §3.4.2.3: a multi-valued attribute sorts by its primary value, else its first.
  const value = field.sub === undefined ? { json: sql`s.v`, text: sql`(s.v #>> '{}')` } : keyOf(sql`s.v`, field.sub);
  const expr = sql`(select ${typed(value)} from jsonb_array_elements(${arrayOf(top.json)}) with ordinality as s(v, n)
    order by (s.v -> 'primary') = 'true'::jsonb desc nulls last, s.n limit 1)`;
  return { expr, type };
}
