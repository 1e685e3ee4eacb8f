import { defineConfig } from "vitest/config";
import { SummaryReporter } from "./test/helpers/summary-reporter.js";

export const config = defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ["default", new SummaryReporter()],
  },
});

// biome-ignore lint/style/noDefaultExport: vitest reads the default export of its config file.
export default config;
