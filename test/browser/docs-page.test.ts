import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../lib/local/paths.ts";
import { useInProcessApi } from "../e2e/harness.ts";

/**
 * Issue 13: GET /docs renders the OpenAPI document in headless Chromium (Debian's `chromium`,
 * installed by `.ci/run`; nothing downloads a browser), loading nothing but its own files under its
 * Content-Security-Policy. The screenshot is kept in `test-artefacts/`.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTEFACTS = join(repoRoot, "test-artefacts");
const available = existsSync(CHROMIUM);
if (!available)
  console.warn(`Skipping the /docs page test: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const local = useInProcessApi("Docs page test");

describe.skipIf(!available)("the API reference page", () => {
  let browser: BrowserContext;
  let profile: string;

  beforeAll(async () => {
    profile = await mkdtemp(join(tmpdir(), "payment-api-chromium-"));
    // A fresh profile (`--user-data-dir`, which Playwright sets from it) for every run.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 1280, height: 1600 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await rm(profile, { recursive: true, force: true });
  });

  it("renders every operation of the document from the API's own files, within its CSP", {
    timeout: 60_000,
  }, async () => {
    const page = await browser.newPage();
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
    expect(await page.locator(".opblock").count()).toBe(operations);
    await expect(page.locator(".info .title").textContent()).resolves.toContain("Payment API");

    await mkdir(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTEFACTS, "docs-page.png"), fullPage: false });
    expect(requested.every((url) => url.startsWith(local.url) || url.startsWith("data:"))).toBe(true);
    expect(problems).toEqual([]);
  });
});
