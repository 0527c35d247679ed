import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One DynamoDB Local (in memory) and one table for the whole run: it takes seconds to start.
    globalSetup: ["test/setup/global-setup.ts"],
    pool: "forks",
    // Two files at a time, whatever the machine: vitest's default (cores − 1) runs them one by one
    // on 2 cores, and most of a file's time is spent waiting on DynamoDB Local, a stack or a
    // browser. On this 2-core machine: 402 to 447 s instead of 592 s for the whole run.
    maxWorkers: 2,
    // A hang's limit, not a speed target: two files at a time on 2 cores, with DynamoDB Local and
    // Chromium beside them, stretch the longest tests (card data at rest: 8 s alone, 20 s once).
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
