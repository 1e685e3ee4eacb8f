import type { Logger } from "./logger.js";

/**
 * A logger whose warnings and errors can be turned into debug lines from some moment on, children made earlier
 * included: during a shutdown that stops the embedded PostgreSQL (which Ctrl-C reaches at the same instant as
 * Roster), a connection breaking or a last write failing — a heartbeat, a claim, a retention prune under way — is
 * the expected end, not something for the operator to act on. A shutdown that fails says so through the logger
 * this one wraps.
 */
export function demotableLogger(logger: Logger): { readonly logger: Logger; demoteWarnings(): void } {
  let demoted = false;
  const wrap = (target: Logger): Logger =>
    new Proxy(target, {
      get(t, prop) {
        if (prop === "warn" || prop === "error") return demoted ? t.debug.bind(t) : t[prop].bind(t);
        if (prop === "child") {
          return (bindings: Record<string, unknown>) => wrap(t.child(bindings) as unknown as Logger);
        }
        const value: unknown = Reflect.get(t, prop, t);
        return typeof value === "function" ? value.bind(t) : value;
      },
    });
  return {
    logger: wrap(logger),
    demoteWarnings: () => {
      demoted = true;
    },
  };
}
