import { createRequire } from "node:module";
import pg from "pg";

// pg's own conversion of parameter values, so that a statement bound here sends exactly what pg would send.
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as {
  prepareValue: (value: unknown) => unknown;
};

/** What a named statement's rows look like on one connection: pg's field list and the parsers it made for them. */
export interface RowDescription {
  readonly fields: readonly unknown[];
  readonly parsers: readonly unknown[];
  readonly empty: object;
}

/** The parts of pg's Query and Result this class works with (pg 8: lib/query.js, lib/result.js). */
interface QueryInternals {
  name?: string;
  portal: string;
  values?: unknown[];
  binary?: boolean;
  rows?: number;
  callback?: (err: Error | null, result: unknown) => void;
  _result: { fields: unknown; _parsers: unknown; _prebuiltEmptyResultObject: object | null };
  _accumulateRows: boolean;
  _checkForMultirow(): void;
  _getRows(connection: unknown, rows: number | undefined): void;
  hasBeenParsed(connection: unknown): boolean;
  handleError(err: unknown, connection: unknown): void;
}

interface ConnectionInternals {
  bind(config: unknown): void;
  close(config: { type: "S"; name: string }): void;
  sync(): void;
}

/**
 * A named statement's execution that asks PostgreSQL to describe its rows only the first time on a connection.
 * pg sends Describe with every Bind, and parses the RowDescription that answers it — and builds the row's parsers
 * from it — on every execution: for a GET by id, 4 % of the server's CPU. A named statement's text is fixed, so
 * its rows keep the shape PostgreSQL described the first time; should its tables change shape meanwhile, PostgreSQL
 * refuses the execution itself ("cached plan must not change result type"), described or not.
 *
 * Run by ResilientClient.query, which gives it its callback and answers with a promise as for any query.
 */
export class DescribedQuery extends pg.Query {
  readonly #described: Map<string, RowDescription>;

  constructor(config: { name: string; text: string; values: unknown[] }, described: Map<string, RowDescription>) {
    // The text and values as arguments, the name set after: pg copies a config object property by property, through
    // its property descriptors, on every query (~2 % of a GET's CPU); a text it takes as it is.
    super(config.text, config.values);
    (this as unknown as QueryInternals).name = config.name;
    this.#described = described;
  }

  prepare(connection: ConnectionInternals): void {
    const self = this as unknown as QueryInternals;
    const name = self.name ?? "";
    const known = this.#described.get(name);
    if (known === undefined || !self.hasBeenParsed(connection)) {
      (pg.Query.prototype as unknown as { prepare(c: unknown): void }).prepare.call(this, connection);
      return;
    }
    try {
      connection.bind({
        portal: self.portal,
        statement: name,
        values: self.values,
        binary: self.binary,
        valueMapper: prepareValue,
      });
    } catch (err) {
      // As pg does: the statement stays usable, the query fails.
      connection.close({ type: "S", name });
      connection.sync();
      self.handleError(err, connection);
      return;
    }
    self._checkForMultirow();
    self._result.fields = known.fields;
    self._result._parsers = known.parsers;
    self._result._prebuiltEmptyResultObject = known.empty;
    self._accumulateRows = true;
    self._getRows(connection, self.rows);
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    (pg.Query.prototype as unknown as { handleRowDescription(m: unknown): void }).handleRowDescription.call(
      this,
      message,
    );
    const self = this as unknown as QueryInternals;
    const result = self._result;
    if (self.name !== undefined && result._prebuiltEmptyResultObject !== null) {
      this.#described.set(self.name, {
        fields: result.fields as unknown[],
        parsers: result._parsers as unknown[],
        empty: result._prebuiltEmptyResultObject,
      });
    }
  }
}
