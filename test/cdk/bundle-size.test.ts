import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { BUNDLE_LIMIT_EXCEPTIONS_KIB, BUNDLE_LIMIT_KIB, bundleLimitKib } from "../../bench/bundles.ts";
import { bundleSize, handlerBuildOptions, projectRoot } from "../../lib/bundling.ts";
import { allHandlers, handlerEntry } from "../../lib/topology.ts";

/**
 * Every Lambda bundle stays within the budget (issue 8: cold start grows with what a function
 * loads). Built with the deployment's options, in memory; `npm run bench` prints the sizes.
 */
describe("Lambda bundles", () => {
  it(`are each at most ${BUNDLE_LIMIT_KIB} KiB, but for the exceptions named with their reason`, {
    timeout: 180_000,
  }, async () => {
    const sizes: Record<string, number> = {};
    for (const handler of allHandlers()) {
      sizes[handler] = Math.round((await bundleSize(handlerEntry(handler))) / 102.4) / 10;
    }
    const over = Object.entries(sizes).filter(([handler, kib]) => kib > bundleLimitKib(handler));
    expect(
      over,
      `largest: ${JSON.stringify(
        Object.entries(sizes)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 3),
      )}`,
    ).toEqual([]);
    expect(Object.keys(sizes).length).toBeGreaterThan(60);
    // An exception names a function that exists and needs it (else it is stale).
    for (const handler of Object.keys(BUNDLE_LIMIT_EXCEPTIONS_KIB)) {
      expect(sizes[handler], handler).toBeGreaterThan(BUNDLE_LIMIT_KIB);
    }
  });

  it("load as deployed: the SFTP delivery's CommonJS dependencies find require, __dirname and __filename in ESM", {
    timeout: 60_000,
  }, async () => {
    // ssh2 resolves a path from `__dirname` as it loads: its bundle failed at load without the
    // banner's `__dirname`, which only loading the built file shows (tests import the sources).
    const outdir = join(projectRoot, ".cache", "bundle-load", "exports-deliver");
    await rm(outdir, { recursive: true, force: true });
    await build(handlerBuildOptions(handlerEntry("exports/deliver"), outdir));
    const loaded = await promisify(execFile)(
      process.execPath,
      [
        "--input-type=module",
        "--eval",
        `const m = await import(${JSON.stringify(join(outdir, "index.mjs"))}); process.stdout.write(typeof m.handler);`,
      ],
      { cwd: projectRoot },
    );
    expect(loaded.stdout).toBe("function");
  });
});
