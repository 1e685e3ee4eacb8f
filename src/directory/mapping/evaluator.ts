import { Piscina } from "piscina";
import { MappingError } from "./errors.js";
import { FairQueue } from "./fair-queue.js";

/** Guardrails of every evaluation: wall time (a hard deadline), JSONata stack depth, sequence length and memory. */
export const MAPPING_TIMEOUT_MS = 1_000;
export const MAPPING_MAX_DEPTH = 200;
export const MAPPING_MAX_SEQUENCE = 100_000;
const WORKER_HEAP_MB = 64;
/** Evaluations of one organization waiting for a worker beyond this many are refused at once rather than queued. */
const MAX_QUEUED_PER_ORGANIZATION = 1_000;
/** A worker that has not started a task this long after it was handed over cannot start at all. */
const WORKER_START_LIMIT_MS = 30_000;
const LIMITS = { timeout: MAPPING_TIMEOUT_MS, stack: MAPPING_MAX_DEPTH, sequence: MAPPING_MAX_SEQUENCE };
const WORKER = new URL("./evaluate-worker.mjs", import.meta.url).href;

/** What an evaluation answered: the result as JSON text (undefined: no result), or JSONata's error. */
export type Evaluation =
  | { readonly ok: true; readonly json: string | undefined }
  | { readonly ok: false; readonly code: string; readonly message: string };

interface Job {
  readonly text: string;
  readonly input: Record<string, unknown>;
  resolve(outcome: Evaluation): void;
  reject(e: MappingError): void;
  /** Refuses the job if it did not get a worker within the deadline (a write holds its transaction meanwhile). */
  waiting: NodeJS.Timeout | undefined;
}

export interface EvaluatorOptions {
  /** Evaluations running at once, all organizations together; default 2. */
  readonly concurrency?: number;
  /** Evaluations of one organization running at once; default `concurrency - 1` (at least 1). */
  readonly perOrganization?: number;
  readonly timeoutMs?: number;
}

/**
 * Evaluates mapping scripts in a piscina pool of worker threads, so no script — a catastrophic regular expression
 * included, which JSONata's own timeout cannot interrupt — blocks the event loop: a task that misses the deadline is
 * aborted, which terminates its worker, and piscina starts a replacement (docs/decisions.md "Mapping sandbox").
 *
 * Organizations share the pool fairly (docs/security.md "Tenant isolation"): each has its own queue, the queues are
 * served round robin, and one organization never runs more than `perOrganization` evaluations at once — by default
 * one thread fewer than the pool, so another organization always finds a thread while one's scripts hit the
 * deadline. The pool keeps one thread more than it runs tasks, jobs go only to threads that are ready and idle, and
 * an organization whose last evaluation missed the deadline takes a thread only while another stays idle: the cold
 * start of a terminated worker's replacement is waited for by that organization, not by the others.
 */
export class MappingEvaluator {
  readonly #concurrency: number;
  readonly #timeoutMs: number;
  readonly #queue: FairQueue<Job>;
  #pool: Piscina | undefined;
  /** Shared with the workers: when each running task started (0: not yet), by slot. */
  readonly #started: BigInt64Array;
  readonly #freeSlots: number[];
  #running = 0;
  /** Organizations whose last evaluation missed the deadline: they take a thread only while another stays idle. */
  readonly #overdue = new Set<string>();
  #closed = false;

  constructor(options: EvaluatorOptions = {}) {
    this.#concurrency = Math.max(1, options.concurrency ?? 2);
    this.#timeoutMs = options.timeoutMs ?? MAPPING_TIMEOUT_MS;
    const share = options.perOrganization ?? Math.max(1, this.#concurrency - 1);
    this.#queue = new FairQueue(share, MAX_QUEUED_PER_ORGANIZATION);
    this.#started = new BigInt64Array(new SharedArrayBuffer(8 * this.#concurrency));
    this.#freeSlots = Array.from({ length: this.#concurrency }, (_, i) => i);
  }

  /** Evaluates `text` against `input` for `organization` (its share of the pool; "" for callers outside one). */
  evaluate(text: string, input: Record<string, unknown>, organization = ""): Promise<Evaluation> {
    if (this.#closed) return Promise.reject(new MappingError("the mapping evaluator is shut down"));
    return new Promise<Evaluation>((resolve, reject) => {
      const job: Job = { text, input, resolve, reject, waiting: undefined };
      if (!this.#queue.push(organization, job)) {
        reject(new MappingError("too many mappings are being evaluated"));
        return;
      }
      job.waiting = setTimeout(() => {
        if (this.#queue.remove(organization, job)) {
          reject(new MappingError(`no mapping evaluator was free within ${this.#timeoutMs} ms`));
        }
      }, this.#timeoutMs);
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.drain()) {
      clearTimeout(job.waiting);
      job.reject(new MappingError("the mapping evaluator is shut down"));
    }
    await this.#pool?.destroy();
  }

  /**
   * Hands queued jobs to idle threads: only to a thread that is ready and idle (piscina would otherwise queue a job
   * for a worker still starting — a terminated worker's replacement — and the job would wait out its cold start).
   */
  #dispatch(): void {
    while (this.#running < this.#concurrency && !this.#closed) {
      const pool = this.#piscina();
      const idle = pool.idleThreads;
      if (idle === 0) return;
      const next = this.#queue.take((tenant) => idle >= 2 || !this.#overdue.has(tenant));
      if (next === undefined) return;
      clearTimeout(next.job.waiting);
      this.#running++;
      void this.#run(pool, next.tenant, next.job).finally(() => {
        this.#running--;
        this.#queue.done(next.tenant);
        this.#dispatch();
      });
    }
  }

  /** Created at the first evaluation: an app whose clients all use the default mapping starts no thread. */
  #piscina(): Piscina {
    if (this.#pool !== undefined) return this.#pool;
    this.#pool = new Piscina({
      filename: WORKER,
      name: "evaluate",
      minThreads: this.#concurrency + 1,
      maxThreads: this.#concurrency + 1,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      // The worker is plain JavaScript: without the parent's loaders (tsx) it starts several times faster.
      execArgv: [],
      workerData: { started: this.#started.buffer },
    });
    // A replacement worker is ready: jobs may be waiting for it.
    this.#pool.on("workerCreate", () => this.#dispatch());
    return this.#pool;
  }

  async #run(pool: Piscina, tenant: string, job: Job): Promise<void> {
    const slot = this.#freeSlots.pop() ?? 0;
    Atomics.store(this.#started, slot, 0n);
    const abort = new AbortController();
    let reason: MappingError | undefined;
    const stop = (why: string) => {
      reason = new MappingError(why);
      abort.abort(reason);
    };
    // The deadline runs from when the worker started the task (it writes the time into its slot), so a worker's
    // cold start does not count against the script; a worker that never starts it is given up after a while.
    const handed = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const check = () => {
      const at = Number(Atomics.load(this.#started, slot));
      const now = Date.now();
      if (at === 0 && now - handed >= WORKER_START_LIMIT_MS) return stop("the mapping evaluator failed to start");
      const left = at === 0 ? this.#timeoutMs : at + this.#timeoutMs - now;
      if (left <= 0) {
        this.#overdue.add(tenant);
        return stop(`evaluating the mapping took longer than ${this.#timeoutMs} ms`);
      }
      timer = setTimeout(check, left);
    };
    timer = setTimeout(check, this.#timeoutMs);
    try {
      const task = { text: job.text, input: job.input, limits: { ...LIMITS, timeout: this.#timeoutMs }, slot };
      job.resolve((await pool.run(task, { signal: abort.signal })) as Evaluation);
      this.#overdue.delete(tenant);
    } catch (e) {
      job.reject(reason ?? failure(e));
    } finally {
      clearTimeout(timer);
      this.#freeSlots.push(slot);
    }
  }
}

function failure(e: unknown): MappingError {
  if ((e as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") {
    return new MappingError(`evaluating the mapping used more than ${WORKER_HEAP_MB} MiB`);
  }
  return new MappingError("the mapping evaluator failed");
}
