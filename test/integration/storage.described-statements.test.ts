import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type OpenDatabase } from "../../src/storage/database.js";
import { preparedStatement } from "../../src/storage/prepared.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * A named statement has PostgreSQL describe its rows once per connection (DescribedQuery): later executions send
 * Bind and Execute only, and read their rows with the parsers made the first time.
 */
const { database } = useTestApp({ app: false });
let open: OpenDatabase;
const describes: string[] = [];
const describe0 = pg.Connection.prototype.describe;

beforeAll(() => {
  open = openDatabase({ url: database.url, schema: database.schema, poolSize: 1 });
  pg.Connection.prototype.describe = function (this: pg.Connection, msg, more) {
    describes.push(msg.type);
    return describe0.call(this, msg, more);
  };
});
afterEach(() => {
  describes.length = 0;
});
afterAll(async () => {
  pg.Connection.prototype.describe = describe0;
  await open.close();
});

const TYPED = preparedStatement("described_typed");
const typed = (n: number) =>
  TYPED.sql<{ n: number; at: Date; doc: { n: number }; label: string; none: null }>`select ${n}::int8 as n,
    timestamptz '2026-01-02T03:04:05.678Z' + make_interval(secs => ${n}::int) as at,
    json_build_object('n', ${n}::int) as doc, 'row ' || ${n}::text as label, null::text as none`.execute(open.db);

describe("named statements described once per connection", () => {
  it("reads the rows of every later execution with the types of the first", async () => {
    for (const n of [1, 2, 3]) {
      const { rows } = await typed(n);
      expect(rows).toEqual([
        { n, at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5 + n, 678)), doc: { n }, label: `row ${n}`, none: null },
      ]);
    }
    // pg's own path describes with every execution: three here.
    expect(describes).toEqual(["P"]);
  });

  it("keeps the connection usable after an execution PostgreSQL refuses", async () => {
    const SIGNED = preparedStatement("described_cast");
    const cast = (v: string) => SIGNED.sql<{ v: number }>`select ${v}::int as v`.execute(open.db);
    expect((await cast("7")).rows).toEqual([{ v: 7 }]);
    await expect(cast("seven")).rejects.toThrow(/invalid input syntax/);
    expect((await cast("8")).rows).toEqual([{ v: 8 }]);
    expect(describes).toEqual(["P"]);
  });

  it("answers a statement without rows, and one whose result has many", async () => {
    const MANY = preparedStatement("described_many");
    for (const n of [0, 3, 250]) {
      const { rows } = await MANY.sql<{ i: number }>`select i from generate_series(1, ${n}::int) as i`.execute(open.db);
      expect(rows.map((r) => r.i)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    }
    expect(describes).toEqual(["P"]);
  });
});
