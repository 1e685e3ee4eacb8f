import type { SerializedError } from "vitest";
import type { Reporter, TestModule, TestRunEndReason } from "vitest/node";

/**
 * Prints the plain `tests: N passed, N failed` closing line CI reads. "failed" counts every failure vitest knows of,
 * not only failed tests: a file that did not load, a failed beforeAll/afterAll of a file or a suite (their tests are
 * then skipped, not failed), and every unhandled error; and a run that vitest itself ends as failed or interrupted
 * never says "0 failed".
 */
export class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError> = [],
    reason: TestRunEndReason = "passed",
  ): void {
    const counts = summarize(testModules, unhandledErrors.length, reason);
    process.stdout.write(`\n${summaryLine(counts)}\n`);
  }
}

export interface Summary {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
}

export function summaryLine({ passed, failed, skipped }: Summary): string {
  return `tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`;
}

export function summarize(
  testModules: ReadonlyArray<TestModule>,
  unhandledErrors: number,
  reason: TestRunEndReason,
): Summary {
  let passed = 0;
  let failed = unhandledErrors;
  let skipped = 0;
  for (const m of testModules) {
    let failedHere = 0;
    for (const t of m.children.allTests()) {
      const state = t.result().state;
      if (state === "passed") passed++;
      else if (state === "failed") failedHere++;
      else skipped++;
    }
    // Errors outside any test: a file that failed to load or collect, a failed hook of the file or of a suite.
    failedHere += m.errors().length;
    for (const s of m.children.allSuites()) failedHere += s.errors().length;
    // A file vitest marks failed for a reason not listed above still counts once.
    if (m.state() === "failed" && failedHere === 0) failedHere = 1;
    failed += failedHere;
  }
  if (failed === 0 && reason !== "passed") failed = 1;
  return { passed, failed, skipped };
}
