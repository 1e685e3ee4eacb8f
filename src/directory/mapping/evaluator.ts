import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { MappingError } from "./errors.js";

/** Guardrails of every evaluation: wall time (a hard deadline), JSONata stack depth, sequence length and memory. */
export const MAPPING_TIMEOUT_MS = 1_000;
export const MAPPING_MAX_DEPTH = 200;
export const MAPPING_MAX_SEQUENCE = 100_000;
const WORKER_HEAP_MB = 64;
/** Evaluations waiting for a free worker beyond this many are refused at once rather than queued. */
const MAX_QUEUED = 1_000;
/** Compiled scripts each worker keeps (the mapper's own cache bounds how many distinct scripts there are). */
const WORKER_CACHE = 64;

/**
 * The worker's code, plain CommonJS evaluated in the thread (so it loads the same way under tsx, vitest and node):
 * compile once per script text, evaluate with JSONata's own limits, answer the result as JSON text.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const jsonata = require(workerData.jsonata);
const compiled = new Map();
parentPort.on("message", async ({ text, input }) => {
  try {
    let expression = compiled.get(text);
    if (expression === undefined) {
      expression = jsonata(text, workerData.limits);
      if (compiled.size >= workerData.cache) compiled.delete(compiled.keys().next().value);
      compiled.set(text, expression);
    }
    const result = await expression.evaluate(input);
    parentPort.postMessage({ ok: true, json: result === undefined ? undefined : (JSON.stringify(result) ?? "null") });
  } catch (e) {
    const code = e !== null && typeof e === "object" && typeof e.code === "string" ? e.code : "";
    const message = e !== null && typeof e === "object" && typeof e.message === "string" ? e.message : "unknown error";
    parentPort.postMessage({ ok: false, code, message: message.slice(0, 300) });
  }
});
`;

/** What an evaluation answered: the result as JSON text (undefined: no result), or JSONata's error. */
export type Evaluation =
  | { readonly ok: true; readonly json: string | undefined }
  | { readonly ok: false; readonly code: string; readonly message: string };

interface Job {
  readonly text: string;
  readonly input: Record<string, unknown>;
  resolve(outcome: Evaluation): void;
  reject(e: MappingError): void;
  /** Refuses the job if no worker took it within the deadline (a write holds its transaction meanwhile). */
  waiting: NodeJS.Timeout | undefined;
}

interface Slot {
  worker: Worker | undefined;
  /** Whether the worker thread has started: the deadline measures evaluation, not a thread's start-up. */
  online: boolean;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Evaluates mapping scripts in a small pool of worker threads, so no script — a catastrophic regular expression
 * included, which JSONata's own timeout cannot interrupt — blocks the event loop: a worker that misses the deadline
 * is terminated and replaced (docs/decisions.md "Mapping sandbox").
 */
export class MappingEvaluator {
  readonly #slots: Slot[];
  readonly #queue: Job[] = [];
  readonly #timeoutMs: number;
  readonly #jsonata = createRequire(import.meta.url).resolve("jsonata");
  #closed = false;

  constructor(size = 2, timeoutMs = MAPPING_TIMEOUT_MS) {
    this.#slots = Array.from({ length: size }, () => ({
      worker: undefined,
      online: false,
      job: undefined,
      timer: undefined,
    }));
    this.#timeoutMs = timeoutMs;
  }

  evaluate(text: string, input: Record<string, unknown>): Promise<Evaluation> {
    if (this.#closed) return Promise.reject(new MappingError("the mapping evaluator is shut down"));
    if (this.#queue.length >= MAX_QUEUED)
      return Promise.reject(new MappingError("too many mappings are being evaluated"));
    return new Promise<Evaluation>((resolve, reject) => {
      const job: Job = { text, input, resolve, reject, waiting: undefined };
      job.waiting = setTimeout(() => {
        const at = this.#queue.indexOf(job);
        if (at < 0) return;
        this.#queue.splice(at, 1);
        reject(new MappingError(`no mapping evaluator was free within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) {
      clearTimeout(job.waiting);
      job.reject(new MappingError("the mapping evaluator is shut down"));
    }
    await Promise.all(
      this.#slots.map((slot) => this.#retire(slot, new MappingError("the mapping evaluator is shut down"))),
    );
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (slot.job !== undefined) continue;
      const job = this.#queue.shift();
      if (job === undefined) return;
      clearTimeout(job.waiting);
      slot.job = job;
      const worker = slot.worker ?? this.#spawn(slot);
      slot.worker = worker;
      if (slot.online) this.#arm(slot);
      worker.postMessage({ text: job.text, input: job.input });
    }
  }

  /** Starts the deadline of the slot's job. */
  #arm(slot: Slot): void {
    slot.timer = setTimeout(() => {
      void this.#retire(slot, new MappingError(`evaluating the mapping took longer than ${this.#timeoutMs} ms`));
    }, this.#timeoutMs);
  }

  #spawn(slot: Slot): Worker {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        jsonata: this.#jsonata,
        cache: WORKER_CACHE,
        limits: { timeout: this.#timeoutMs, stack: MAPPING_MAX_DEPTH, sequence: MAPPING_MAX_SEQUENCE },
      },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    worker.unref();
    slot.online = false;
    worker.once("online", () => {
      if (slot.worker !== worker) return;
      slot.online = true;
      if (slot.job !== undefined) this.#arm(slot);
    });
    worker.on("message", (outcome: Evaluation) => {
      const job = slot.job;
      if (slot.worker !== worker || job === undefined) return;
      clearTimeout(slot.timer);
      slot.job = undefined;
      job.resolve(outcome);
      this.#dispatch();
    });
    const lost = (reason: string) => {
      if (slot.worker === worker) void this.#retire(slot, new MappingError(reason));
    };
    worker.on("error", (e) =>
      lost(
        (e as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY"
          ? `evaluating the mapping used more than ${WORKER_HEAP_MB} MiB`
          : "the mapping evaluator failed",
      ),
    );
    worker.on("exit", () => lost("the mapping evaluator stopped"));
    return worker;
  }

  /** Ends the slot's worker (a replacement is started by the next evaluation) and fails the job it was running. */
  async #retire(slot: Slot, reason: MappingError): Promise<void> {
    const { worker, job } = slot;
    clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.worker = undefined;
    slot.online = false;
    slot.job = undefined;
    job?.reject(reason);
    if (!this.#closed) this.#dispatch();
    await worker?.terminate();
  }
}
