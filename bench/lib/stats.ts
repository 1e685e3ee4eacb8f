export interface LatencySummary {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly mean: number;
  readonly max: number;
}

/** Percentiles by the nearest-rank method over every sample (no histogram buckets), in milliseconds. */
export function summarize(samples: readonly number[]): LatencySummary {
  if (samples.length === 0)
    return { p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, mean: Number.NaN, max: Number.NaN };
  const sorted = Float64Array.from(samples).sort();
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    p50: rank(0.5),
    p90: rank(0.9),
    p99: rank(0.99),
    mean: sum / sorted.length,
    max: sorted[sorted.length - 1] ?? 0,
  };
}
