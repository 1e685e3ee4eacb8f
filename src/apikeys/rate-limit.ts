import type { RateLimit } from "./model.js";

/**
 * Fixed-window rate limits (counters are rows, so every instance counts against the same window).
 * Windows are aligned to the Unix epoch in multiples of the period, computed from the injected clock.
 */
export const windowStart = (now: Date, periodSeconds: number): Date => {
  const periodMs = periodSeconds * 1000;
  return new Date(Math.floor(now.getTime() / periodMs) * periodMs);
};

/** One counter after this verification was counted. */
export interface CounterReading {
  readonly name: string;
  readonly windowStart: Date;
  readonly count: number;
}

export interface RateLimitStatus {
  readonly limit: number;
  readonly remaining: number;
  readonly resetTime: Date;
}

export interface RateLimitOutcome {
  readonly admitted: boolean;
  /** The most constraining limit: the lowest remaining, then the latest reset (when the next call may pass). */
  readonly status: RateLimitStatus;
}

/**
 * A verification is admitted when every limit's count (this one included) stays within its limit. Every
 * verification of a live key counts, admitted or not, so hammering a limited key does not reset it.
 */
export function evaluate(
  limits: readonly RateLimit[],
  readings: readonly CounterReading[],
): RateLimitOutcome | undefined {
  let admitted = true;
  let worst: RateLimitStatus | undefined;
  for (const limit of limits) {
    const reading = readings.find((r) => r.name === limit.name);
    if (reading === undefined) continue;
    if (reading.count > limit.limit) admitted = false;
    const status: RateLimitStatus = {
      limit: limit.limit,
      remaining: Math.max(0, limit.limit - reading.count),
      resetTime: new Date(reading.windowStart.getTime() + limit.periodSeconds * 1000),
    };
    if (
      worst === undefined ||
      status.remaining < worst.remaining ||
      (status.remaining === worst.remaining && status.resetTime.getTime() > worst.resetTime.getTime())
    ) {
      worst = status;
    }
  }
  return worst === undefined ? undefined : { admitted, status: worst };
}
