import { CompiledQuery, type Kysely } from "kysely";
import { quoteIdent } from "./quote.js";

/**
 * Bulk loading with `COPY … FROM STDIN`: rows travel as one block of text and PostgreSQL stores them with its
 * multi-row insert, which costs it well under half of what an `INSERT … SELECT` of the same rows from a JSON or array
 * parameter does (parsing, per-row executor work and WAL records). Only for append-only tables written in batches
 * off any request's path; the statement runs on the pool (or in a transaction) like any other.
 */

/** A value of a COPY text-format field. */
export type CopyValue = string | number | boolean | Date | null | undefined;

/** The property a compiled COPY statement carries its data in, from copyRows to the connection (driver.ts). */
const COPY_DATA = Symbol("roster.copyData");

type WithCopyData = CompiledQuery & { readonly [COPY_DATA]?: string };

/** Appends `rows` (each as many values as `columns`) to `table`; resolves with the number of rows stored. */
export async function copyRows(
  // biome-ignore lint/suspicious/noExplicitAny: any database: only executeQuery is used.
  db: Kysely<any>,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly CopyValue[])[],
): Promise<number> {
  if (rows.length === 0) return 0;
  let data = "";
  for (const row of rows) data += copyLine(row);
  const statement = `copy ${quoteIdent(table)} (${columns.map(quoteIdent).join(", ")}) from stdin`;
  const query: WithCopyData = Object.freeze({ ...CompiledQuery.raw(statement), [COPY_DATA]: data });
  const result = await db.executeQuery(query);
  return Number(result.numAffectedRows ?? 0n);
}

/** The rows of a COPY statement built by copyRows, in COPY's text format. */
export const copyDataOf = (query: CompiledQuery): string | undefined => (query as WithCopyData)[COPY_DATA];

/** One row in COPY's text format: fields separated by tabs, `\N` for null, ended by a newline. */
export function copyLine(values: readonly CopyValue[]): string {
  let line = "";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) line += "\t";
    line += copyField(values[i]);
  }
  return `${line}\n`;
}

const SPECIAL = /[\\\t\n\r\0]/;
const SPECIALS = /[\\\t\n\r\0]/g;

/**
 * A field in COPY's text format: backslash, tab, newline and carriage return escaped. PostgreSQL's text cannot hold
 * U+0000 at all, so a NUL character becomes U+FFFD (JSON text, the usual content, never has one: JSON.stringify
 * writes it as the six characters `\u0000`).
 */
export function copyField(value: CopyValue): string {
  if (value === null || value === undefined) return "\\N";
  if (typeof value === "string") return SPECIAL.test(value) ? value.replace(SPECIALS, escapeChar) : value;
  if (typeof value === "boolean") return value ? "t" : "f";
  if (typeof value === "number") return String(value);
  return value.toISOString();
}

const escapeChar = (c: string): string =>
  c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : c === "\r" ? "\\r" : "\uFFFD";
