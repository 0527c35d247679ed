import { describe, expect, it } from "vitest";
import { BUNDLE_LIMIT_EXCEPTIONS_KIB, BUNDLE_LIMIT_KIB, bundleLimitKib } from "../../bench/bundles.ts";
import { bundleSize } from "../../lib/bundling.ts";
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
});
