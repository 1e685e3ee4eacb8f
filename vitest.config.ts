import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { filesFirst } from "./test/helpers/sequencer.js";
import { SummaryReporter } from "./test/helpers/summary-reporter.js";

/**
 * Test files that change process-wide state a later file in the same worker would inherit (a global OpenTelemetry
 * provider and the pg module patched for it): each runs in a fresh worker of its own.
 */
const ISOLATED = ["test/integration/observability.traces-export.test.ts"];

/**
 * Test files that bound wall-clock time (a deadline, a latency, a pool's wait) or load the database on purpose:
 * they run after the others, one at a time, so that no other test file competes with them for the CPU.
 */
const ALONE = [
  "test/integration/storage.faults.test.ts",
  "test/integration/storage.timeouts.test.ts",
  "test/integration/storage.unanswered.test.ts",
  "test/integration/storage.sync-standby.test.ts",
  "test/integration/groups.concurrent-nesting.test.ts",
  "test/integration/mapping.sandbox.test.ts",
  "test/integration/mapping.tenancy.test.ts",
  "test/integration/request-log.buffer.test.ts",
  "test/integration/webhooks.organization-share.test.ts",
];

/**
 * The longest files (12–40 s each run alone on a quiet 2-core machine, up to twice that in a whole run), longest
 * first: they start first. vitest orders a project's files longest first only when its cache holds their durations
 * from an earlier run; without one (a fresh checkout, CI) it starts the largest files first, and server.shutdown
 * (13 s alone) is about the 150th of 175 by size: a long file started that late keeps one worker busy after the
 * other has run out of files.
 */
const LONGEST = [
  "test/integration/portal.browser.test.ts",
  "test/integration/webhooks.kill9.test.ts",
  "test/fuzz/observability.secrets-fuzz.test.ts",
  "test/integration/portal.setup-link-browser.test.ts",
  "test/integration/api-keys.deprovisioning-guard.kill9.test.ts",
  "test/integration/scim.filter-plans.test.ts",
  "test/integration/storage.embedded-data-dir-faults.test.ts",
  "test/integration/storage.pooled-start.test.ts",
  "test/fuzz/scim.input-fuzz.test.ts",
  "test/integration/portal.deprovisioning-guard.test.ts",
  "test/integration/server.shutdown.test.ts",
  "test/integration/server.public-url-warnings.test.ts",
  "test/integration/server.reverse-proxy.test.ts",
];

/**
 * One worker per core. vitest's default (cores − 1) left a 2-core machine running one file at a time; more workers
 * than cores starve the fuzz properties and the child processes some files start of CPU on a shared machine, and
 * their time bounds then fail.
 */
const WORKERS = Number(process.env.ROSTER_TEST_WORKERS ?? availableParallelism());

const common = {
  globalSetup: ["test/helpers/global-setup.ts"],
  // Files share the cores: a test that takes 15 s alone may take twice that beside others.
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export const config = defineConfig({
  test: {
    pool: "forks",
    sequence: { sequencer: filesFirst(LONGEST) },
    reporters: ["default", new SummaryReporter()],
    projects: [
      {
        test: {
          ...common,
          name: "tests",
          include: ["test/**/*.test.ts"],
          exclude: [...ISOLATED, ...ALONE],
          // A worker keeps the modules it imported for its next file: importing the app's whole module graph again
          // for every file cost more than most files' tests. Each file still gets its own database and app.
          isolate: false,
          maxWorkers: WORKERS,
        },
      },
      { test: { ...common, name: "isolated", include: ISOLATED, isolate: true, maxWorkers: WORKERS } },
      {
        test: {
          ...common,
          name: "alone",
          include: ALONE,
          isolate: false,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

// biome-ignore lint/style/noDefaultExport: vitest reads the default export of its config file.
export default config;
