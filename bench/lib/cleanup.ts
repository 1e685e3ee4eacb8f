/**
 * Everything the harness starts registers how to stop it here; stops run last-started-first, once, on success,
 * on error and on Ctrl-C alike.
 */
export class Cleanup {
  readonly #steps: { name: string; stop: () => Promise<void> }[] = [];
  #running: Promise<void> | undefined;

  add(name: string, stop: () => Promise<void>): void {
    this.#steps.push({ name, stop });
  }

  run(): Promise<void> {
    this.#running ??= this.#runAll();
    return this.#running;
  }

  async #runAll(): Promise<void> {
    for (let step = this.#steps.pop(); step !== undefined; step = this.#steps.pop()) {
      try {
        await step.stop();
      } catch (e) {
        process.stderr.write(`bench: stopping ${step.name} failed: ${e instanceof Error ? e.message : String(e)}\n`);
      }
    }
  }
}

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

/**
 * SIGINT/SIGTERM (Ctrl-C) stop everything, then exit. Other listeners stay: under the `tsx` CLI a hidden one
 * reports the signal to the parent process, which otherwise SIGKILLs this one 30 ms later, before it cleaned up.
 */
export function stopOnSignals(cleanup: Cleanup): void {
  let stopping = false;
  for (const signal of SIGNALS) {
    process.on(signal, () => {
      if (stopping) {
        process.stderr.write(`bench: ${signal}: still stopping what it started\n`);
        return;
      }
      stopping = true;
      process.stderr.write(`\nbench: ${signal}: stopping everything it started\n`);
      void cleanup.run().finally(() => process.exit(130));
    });
  }
}

/** Puts back the signal listeners `task` removes (startEmbedded strips them all, ours and tsx's included). */
export async function keepSignalListeners<T>(task: () => Promise<T>): Promise<T> {
  const saved = SIGNALS.map((signal) => ({ signal, listeners: process.rawListeners(signal) }));
  try {
    return await task();
  } finally {
    for (const { signal, listeners } of saved) {
      const present = new Set(process.rawListeners(signal));
      for (const listener of listeners) {
        if (!present.has(listener)) process.on(signal, listener as (signal: NodeJS.Signals) => void);
      }
    }
  }
}
