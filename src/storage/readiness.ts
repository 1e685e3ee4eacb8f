import type { Db } from "./database.js";
import { pendingMigrations } from "./migrate.js";

/** A readiness probe is answered within this, whatever the database does (probes time out at 1 s by default). */
export const READY_ANSWER_MS = 800;

export interface ReadinessState {
  readonly ready: boolean;
  /** `ok`, `migrations pending`, `database unreachable` (it failed) or `database not answering` (no answer yet). */
  readonly status: string;
  /** With `migrations pending`: how many. */
  readonly pending?: number;
}

/**
 * `GET /health/ready`: reachable and every known migration applied (one query), answered within READY_ANSWER_MS.
 * One check runs at a time and concurrent probes share it. While a check is under way and the last one found the
 * database not ready, the answer is that last state at once; a check that outlasts READY_ANSWER_MS answers
 * `database not answering` (it goes on, and its result is the next answer). A black-holed database, whose
 * statement would wait for the connect or statement timeout, never holds a probe past a load balancer's timeout.
 */
export class Readiness {
  readonly #db: Db;
  readonly #answerMs: number;
  #checking: Promise<ReadinessState> | undefined;
  #last: ReadinessState | undefined;

  constructor(db: Db, answerMs = READY_ANSWER_MS) {
    this.#db = db;
    this.#answerMs = answerMs;
  }

  async check(): Promise<ReadinessState> {
    if (this.#checking !== undefined && this.#last !== undefined && !this.#last.ready) return this.#last;
    this.#checking ??= this.#run();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<ReadinessState>((resolve) => {
      timer = setTimeout(() => {
        const state = { ready: false, status: "database not answering" };
        this.#last = state;
        resolve(state);
      }, this.#answerMs);
    });
    try {
      return await Promise.race([this.#checking, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #run(): Promise<ReadinessState> {
    let state: ReadinessState;
    try {
      const pending = await pendingMigrations(this.#db);
      state = pending > 0 ? { ready: false, status: "migrations pending", pending } : { ready: true, status: "ok" };
    } catch {
      state = { ready: false, status: "database unreachable" };
    }
    this.#last = state;
    this.#checking = undefined;
    return state;
  }
}
