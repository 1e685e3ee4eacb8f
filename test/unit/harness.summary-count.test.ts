import { describe, expect, it } from "vitest";
import type { TestModule } from "vitest/node";
import { summarize, summaryLine } from "../helpers/summary-reporter.js";

/** A file as the reporter sees it: its tests' states, its own errors and its suites' (failed hooks, load errors). */
function file(o: { tests?: string[]; errors?: number; suiteErrors?: number[]; failed?: boolean }): TestModule {
  const tests = (o.tests ?? []).map((state) => ({ result: () => ({ state }) }));
  const suites = (o.suiteErrors ?? []).map((n) => ({ errors: () => Array(n).fill({ message: "hook" }) }));
  return {
    children: { allTests: () => tests.values(), allSuites: () => suites.values() },
    errors: () => Array(o.errors ?? 0).fill({ message: "load" }),
    state: () => (o.failed === true ? "failed" : "passed"),
  } as unknown as TestModule;
}

describe("the closing line", () => {
  it.each([
    {
      name: "all passed",
      files: [file({ tests: ["passed", "passed"] })],
      unhandled: 0,
      reason: "passed",
      line: "tests: 2 passed, 0 failed",
    },
    {
      name: "a failed test",
      files: [file({ tests: ["passed", "failed"], failed: true })],
      unhandled: 0,
      reason: "failed",
      line: "tests: 1 passed, 1 failed",
    },
    {
      name: "a file that did not load",
      files: [file({ errors: 1, failed: true })],
      unhandled: 0,
      reason: "failed",
      line: "tests: 0 passed, 1 failed",
    },
    {
      name: "a failed beforeAll (its tests skipped)",
      files: [file({ tests: ["skipped"], suiteErrors: [1], failed: true })],
      unhandled: 0,
      reason: "failed",
      line: "tests: 0 passed, 1 failed, 1 skipped",
    },
    {
      name: "an unhandled error",
      files: [file({ tests: ["passed"] })],
      unhandled: 2,
      reason: "failed",
      line: "tests: 1 passed, 2 failed",
    },
    {
      name: "a file failed for no reason listed",
      files: [file({ tests: ["passed"], failed: true })],
      unhandled: 0,
      reason: "failed",
      line: "tests: 1 passed, 1 failed",
    },
    {
      name: "an interrupted run",
      files: [file({ tests: ["passed"] })],
      unhandled: 0,
      reason: "interrupted",
      line: "tests: 1 passed, 1 failed",
    },
  ] as const)("$name", ({ files, unhandled, reason, line }) => {
    expect(summaryLine(summarize(files, unhandled, reason))).toBe(line);
  });
});
