import pg from "pg";
import { DescribedQuery } from "./described-query.js";

/**
 * A pg client that survives the loss of its connection.
 *
 * pg emits `error` on a client whose connection breaks (a terminated backend, a restarted server, a reset socket);
 * while the client is checked out of the pool nobody listens, and an unheard `error` event ends the process. Here
 * it is always heard: the query under way fails with the error, the client is no longer queryable, and the pool
 * drops it on release.
 *
 * A query that outlives the client-side `query_timeout` (a server that stopped answering, a black-holed network)
 * destroys the connection too: pg would otherwise leave the unanswered statement in front of the next one.
 */
export class ResilientClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on("error", ignoreBrokenConnection);
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query() is a dozen overloads; this forwards all of them.
  override query(...args: any[]): any {
    const [config] = args;
    if (config instanceof DescribedQuery) {
      // pg answers a query object through its callback only: here, as for any other query, with a promise — one
      // promise for the statement, its watch and its timeout together.
      const settled = this.watch();
      return new Promise((resolve, reject) => {
        (config as { callback?: unknown }).callback = (err: Error | null, res: unknown) => {
          settled?.();
          if (err === null || err === undefined) {
            resolve(res);
            return;
          }
          if (err.message === QUERY_TIMEOUT_MESSAGE) this.cut();
          reject(err);
        };
        try {
          (super.query as (q: unknown) => unknown)(config);
        } catch (e) {
          settled?.();
          throw e;
        }
      });
    }
    const result: unknown = (super.query as (...a: unknown[]) => unknown)(...args);
    if (!(result instanceof Promise)) return result;
    const settled = this.watch();
    return result.then(
      (value: unknown) => {
        settled?.();
        return value;
      },
      (e: unknown) => {
        settled?.();
        if (e instanceof Error && e.message === QUERY_TIMEOUT_MESSAGE) this.cut();
        throw e;
      },
    );
  }

  /**
   * Called as a statement is sent; returns what to call once it is answered, or nothing when statements are not
   * watched (liveness.ts watches them).
   */
  protected watch(): (() => void) | undefined {
    return undefined;
  }

  /** Drops the connection at once: the statement under way fails ("Connection terminated"), the pool drops it. */
  cut(): void {
    this.connection.stream.destroy();
  }
}

/** pg's own message for a `query_timeout` (it carries no code). */
const QUERY_TIMEOUT_MESSAGE = "Query read timeout";

const ignoreBrokenConnection = (): void => {};
