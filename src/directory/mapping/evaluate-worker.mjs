// The mapping evaluator's worker (evaluator.ts), run by piscina: plain JavaScript, so it loads the same way under
// node, tsx and vitest. Compiles each script text once, evaluates it with JSONata's own limits, and answers the
// result as JSON text.
import jsonata from "jsonata";
import { workerData } from "piscina";

/** Per running task, the time (Unix ms) its worker started it: evaluator.ts measures the deadline from it. */
const started = new BigInt64Array(workerData.started);

/** Compiled scripts this worker keeps (the mapper's own cache bounds how many distinct scripts there are). */
const CACHE = 64;
const compiled = new Map();

/** @param {{ text: string, input: unknown, limits: object, slot: number }} task */
export async function evaluate({ text, input, limits, slot }) {
  // The deadline starts now, not when the task was queued: a worker's cold start does not count against a script.
  Atomics.store(started, slot, BigInt(Date.now()));
  try {
    let expression = compiled.get(text);
    if (expression === undefined) {
      expression = jsonata(text, limits);
      if (compiled.size >= CACHE) compiled.delete(compiled.keys().next().value);
      compiled.set(text, expression);
    }
    const result = await expression.evaluate(input);
    return { ok: true, json: result === undefined ? undefined : (JSON.stringify(result) ?? "null") };
  } catch (e) {
    const code = e !== null && typeof e === "object" && typeof e.code === "string" ? e.code : "";
    const message = e !== null && typeof e === "object" && typeof e.message === "string" ? e.message : "unknown error";
    return { ok: false, code, message: message.slice(0, 300) };
  }
}
