import { performance } from "node:perf_hooks";
import type pg from "pg";
import { ResilientClient } from "./client.js";

/**
 * A statement unanswered for this share of the connect timeout makes the database suspect, and the probe then has
 * as long: an outage is found (and the statement cut) within 80 % of the connect timeout, the rest a margin.
 */
const PROBE_SHARE = 0.4;
/** How long a probe's answer stands for the database's state before another probe is made. */
const PROBE_FRESH_MS = 500;
/**
 * While the last probe failed, a statement is given this long before it is cut: a healthy statement answers well
 * within it, so a probe that failed for another reason (a pooler's queue full under load) costs only slow ones.
 */
const KNOWN_DOWN_GRACE_MS = 100;

/**
 * Whether the database answers at all, as a client sees it end to end: a fresh connection that runs a statement
 * within PROBE_SHARE of the connect timeout, and no commit stuck waiting for a synchronous standby (commitsAnswer). A connection that a pooler accepts while it has no server (PgBouncer holds the
 * query until `query_wait_timeout`) and a black-holed network (nothing answers, nothing fails) look alike to a
 * statement under way and to a slow one; the probe tells them apart.
 *
 * A statement unanswered for PROBE_SHARE of the connect timeout makes the database suspect (WatchedClient): one probe is
 * made (or joined, or its fresh answer reused), and when it fails every such statement's connection is cut — the
 * request answers 503 within the connect timeout, instead of waiting for `statement_timeout`, the pooler's own
 * timeout or the end of the outage. A statement that is merely slow while the probe answers goes on.
 */
export class DatabaseLiveness {
  readonly #url: string;
  readonly #probeMs: number;
  #probe: Promise<boolean> | undefined;
  #answered = true;
  #checkedAt = Number.NEGATIVE_INFINITY;

  /** `connectMs`: ROSTER_DATABASE_CONNECT_TIMEOUT_MS; 0 turns the watch off. */
  constructor(url: string, connectMs: number) {
    this.#url = url;
    this.#probeMs = connectMs * PROBE_SHARE;
  }

  get watching(): boolean {
    return this.#probeMs > 0;
  }

  /** How long a statement may go unanswered before the database is probed (the last probe failed: shorter). */
  get suspectAfterMs(): number {
    return this.#knownDown() ? Math.min(KNOWN_DOWN_GRACE_MS, this.#probeMs) : this.#probeMs;
  }

  /** Whether the database answers: a probe's fresh answer, the probe under way, or a new probe. */
  answers(): Promise<boolean> {
    if (this.#probe !== undefined) return this.#probe;
    if (performance.now() - this.#checkedAt < PROBE_FRESH_MS) return Promise.resolve(this.#answered);
    this.#probe = probe(this.#url, this.#probeMs).then((answered) => {
      this.#answered = answered;
      this.#checkedAt = performance.now();
      this.#probe = undefined;
      return answered;
    });
    return this.#probe;
  }

  #knownDown(): boolean {
    return !this.#answered && performance.now() - this.#checkedAt < PROBE_FRESH_MS;
  }
}

/**
 * The probe's statement: true unless a commit has waited longer than `waitedMs` for a synchronous standby. A primary
 * without its standby under `synchronous_mode_strict` (the minute after a failover, until the old primary rejoins)
 * answers every read, and `select 1`, at once, while every commit waits — on the server, out of reach of
 * `statement_timeout` — for as long as the standby is missing. Such a wait is an outage for writes. The probe sees
 * only this role's sessions, which are the ones Roster's statements run in.
 */
function commitsAnswer(waitedMs: number): string {
  return (
    "select not exists (select 1 from pg_stat_activity where wait_event = 'SyncRep'" +
    ` and query_start < clock_timestamp() - interval '${Math.round(waitedMs)} milliseconds') as ok`
  );
}

/** A fresh connection and a statement (commitsAnswer) answered within `deadlineMs`; never rejects. */
async function probe(url: string, deadlineMs: number): Promise<boolean> {
  const client = new ResilientClient({ connectionString: url, connectionTimeoutMillis: deadlineMs });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    // After the poll phase that follows: an answer already received while the event loop was busy still wins.
    timer = setTimeout(() => setImmediate(() => resolve(false)), deadlineMs);
    timer.unref();
  });
  const answered = client
    .connect()
    .then(() => client.query(commitsAnswer(deadlineMs)) as Promise<pg.QueryResult<{ ok: boolean }>>)
    .then(
      (r) => r.rows[0]?.ok === true,
      () => false,
    );
  const ok = await Promise.race([answered, late]);
  clearTimeout(timer);
  if (ok) await client.end().catch(() => {});
  // Left waiting (a black hole, a pooler's queue): its socket is dropped, not ended politely.
  else client.cut();
  return ok;
}

/**
 * The pool's client class: a ResilientClient whose statements are watched — one unanswered after
 * `liveness.suspectAfterMs` has the database probed, and its connection is cut when the probe fails.
 */
export function watchedClient(liveness: DatabaseLiveness): typeof ResilientClient {
  if (!liveness.watching) return ResilientClient;
  return class WatchedClient extends ResilientClient {
    /** A connection attempt is watched like a statement: a black hole accepts it and never answers its start-up. */
    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error) => void): void;
    override connect(callback?: (err: Error) => void): Promise<pg.Client> | undefined {
      const done = this.watch();
      if (callback === undefined) return super.connect().finally(done);
      super.connect((err: Error) => {
        done();
        callback(err);
      });
      return undefined;
    }

    /** Starts watching what is under way; returns what to call once it is answered. */
    protected override watch(): () => void {
      let settled = false;
      const timer = setTimeout(() => {
        void liveness.answers().then((answered) => {
          if (!answered && !settled) this.cut();
        });
      }, liveness.suspectAfterMs);
      timer.unref();
      return () => {
        settled = true;
        clearTimeout(timer);
      };
    }
  };
}
