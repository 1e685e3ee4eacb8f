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

/**
 * SIGINT/SIGTERM (Ctrl-C) stop everything, then exit. Call it again after anything that strips signal listeners
 * (startEmbedded removes them).
 */
export function stopOnSignals(cleanup: Cleanup, onSignal: () => void): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.removeAllListeners(signal);
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}: stopping everything it started\n`);
      onSignal();
      void cleanup.run().finally(() => process.exit(130));
    });
  }
}
