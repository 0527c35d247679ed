import { defineConfig } from "vitest/config";

/**
 * Measurements that need the test suite's DynamoDB Local and in-process API but are not tests:
 * `npx vitest run -c bench/vitest/vitest.config.ts` (they print their figures).
 */
export default defineConfig({
  test: {
    root: ".",
    include: ["bench/vitest/**/*.test.ts"],
    globalSetup: ["test/setup/global-setup.ts"],
    pool: "forks",
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
