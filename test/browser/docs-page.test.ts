import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../lib/local/paths.ts";
import { useInProcessApi } from "../e2e/harness.ts";
import { type Browser, chromiumPath, launchChromium, NO_CHROMIUM } from "./chromium.ts";

/**
 * Issue 13: GET /docs renders the OpenAPI document in headless Chromium (Debian's `chromium`,
 * installed by `.ci/run`; nothing downloads a browser), loading nothing but its own files under its
 * Content-Security-Policy. The screenshot is kept in `test-artefacts/`.
 */
const ARTEFACTS = join(repoRoot, "test-artefacts");
if (!chromiumPath) console.warn(`Skipping the /docs page test: ${NO_CHROMIUM}`);

const local = useInProcessApi("Docs page test");

describe.skipIf(!chromiumPath)("the API reference page", () => {
  let browser: Browser;

  beforeAll(() => {
    browser = launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("renders every operation of the document from the API's own files, within its CSP", {
    timeout: 60_000,
  }, async () => {
    const page = await browser.page({ viewport: { width: 1280, height: 1600 } });
    const requested: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));

    const answer = await page.goto(`${local.url}/docs`);
    expect(answer?.status()).toBe(200);
    await page.waitForSelector(".opblock-summary", { timeout: 30_000 });
    const document = (await (await fetch(`${local.url}/openapi.json`)).json()) as {
      paths: Record<string, object>;
    };
    const operations = Object.values(document.paths).flatMap((path) => Object.keys(path)).length;
    // Swagger UI renders a large document's operations as they scroll into view (and drops those
    // scrolled past): every one must have been shown on the way down the page.
    const shown = new Set<string>();
    for (let step = 0; step < 400; step++) {
      for (const id of await page
        .locator(".opblock")
        .evaluateAll((blocks) => blocks.map((block) => block.id)))
        shown.add(id);
      // Run in the page (a string: this file is typed without the DOM's names).
      const atBottom = await page.evaluate(
        "window.scrollBy(0, window.innerHeight / 2), window.innerHeight + window.scrollY >= document.body.scrollHeight - 1",
      );
      if (atBottom && shown.size >= operations) break;
      await page.waitForTimeout(50);
    }
    expect(shown.size).toBe(operations);
    await page.evaluate("window.scrollTo(0, 0)");
    await expect(page.locator(".info .title").textContent()).resolves.toContain("Payment API");

    await mkdir(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTEFACTS, "docs-page.png"), fullPage: false });
    expect(requested.every((url) => url.startsWith(local.url) || url.startsWith("data:"))).toBe(true);
    expect(problems).toEqual([]);
  });
});
