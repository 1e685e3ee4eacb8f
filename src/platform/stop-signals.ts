/**
 * SIGTERM and SIGINT, caught from the first instant of start-up. Without a handler Node ends the process at once, and
 * a signal that came while the embedded PostgreSQL was starting or the migrations were running would leave that
 * PostgreSQL running without its Roster. A signal caught before the server can shut down is kept, and handed to the
 * shutdown once it is installed.
 */
export interface StopSignals {
  /** The first stop signal received, if any. */
  readonly received: string | undefined;
  /** From now on each stop signal calls `stop`; a signal received earlier calls it at once. */
  onStop(stop: (signal: string) => void): void;
}

export function catchStopSignals(): StopSignals {
  let received: string | undefined;
  let handler: ((signal: string) => void) | undefined;
  const caught = (signal: string) => {
    received ??= signal;
    handler?.(signal);
  };
  process.on("SIGTERM", () => caught("SIGTERM"));
  process.on("SIGINT", () => caught("SIGINT"));
  return {
    get received() {
      return received;
    },
    onStop(stop) {
      handler = stop;
      if (received !== undefined) stop(received);
    },
  };
}
