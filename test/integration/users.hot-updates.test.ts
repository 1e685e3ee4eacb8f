import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { PATCH_OP } from "../helpers/constants.js";
import { createUser, scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * A PATCH that changes no identifier writes no indexed value of `identities`, so PostgreSQL can make the update
 * heap-only (HOT: no index entry written) when the page has room, which the table's fillfactor keeps for it.
 * `meta.lastModified` is indexed by the hour of the last change (0043-hot-user-updates): a write within the same hour
 * keeps that value, a write in a later hour does not. The clock is the app's own, set by the test.
 */
const { t, c } = useTestApp({ seed: true });

/** The user's row, every column as JSON. */
const rowOf = async (id: string): Promise<Record<string, unknown>> => {
  const { rows } = await sql<{ row: Record<string, unknown> }>`select to_jsonb(i) as row from identities i
    where i.id = ${id}::uuid`.execute(t.db);
  return rows[0]?.row ?? {};
};
const changed = (before: Record<string, unknown>, after: Record<string, unknown>) =>
  Object.keys(after)
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .sort();

/** The columns the indexes of `identities` read, in their keys, expressions and predicates. */
async function indexedColumns(): Promise<Set<string>> {
  const { rows } = await sql<{ def: string }>`select pg_get_indexdef(indexrelid) as def from pg_index
    where indrelid = 'identities'::regclass`.execute(t.db);
  const { rows: columns } = await sql<{ name: string }>`select attname as name from pg_attribute
    where attrelid = 'identities'::regclass and attnum > 0 and not attisdropped`.execute(t.db);
  // What follows `USING <method>`: the keys, then any `WHERE` predicate (the table's own name comes before).
  const bodies = rows.map((r) => r.def.slice(r.def.indexOf(" USING ")));
  return new Set(columns.map((c) => c.name).filter((name) => bodies.some((b) => new RegExp(`\\b${name}\\b`).test(b))));
}

const rename = async (id: string, displayName: string) => {
  const res = await scim(t, c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "displayName", value: displayName }],
  });
  expect(res.statusCode, res.body).toBe(200);
};

describe("a user's update and the indexes of identities", () => {
  it("a rename within the hour changes no indexed column; in a later hour, only the hour's", async () => {
    t.clock.set(new Date("2026-03-01T10:15:00Z"));
    const id = (await createUser(t, c, {}, "hot")).id as string;
    const indexed = await indexedColumns();
    expect(indexed).toContain("modified_hour");
    expect(indexed).not.toContain("updated_at");

    const created = await rowOf(id);
    t.clock.advance(60_000);
    await rename(id, "Within the hour");
    const renamed = await rowOf(id);
    expect(changed(created, renamed)).toEqual(["scim", "traits", "updated_at", "version"]);
    expect(changed(created, renamed).filter((k) => indexed.has(k))).toEqual([]);

    t.clock.advance(2 * 3_600_000);
    await rename(id, "Two hours on");
    expect(changed(renamed, await rowOf(id)).filter((k) => indexed.has(k))).toEqual(["modified_hour"]);
  });

  it("identities keeps room on each page for an updated row's new version", async () => {
    const { rows } = await sql<{ options: string[] | null }>`select reloptions as options from pg_class
      where oid = 'identities'::regclass`.execute(t.db);
    expect(rows[0]?.options).toContain("fillfactor=85");
  });
});
