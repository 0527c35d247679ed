/**
 * Headless Chromium for the browser tests, driven by `playwright-core` (which downloads no browser):
 * Debian's `chromium` (`.ci/run` installs it when it is missing), or the one `CHROMIUM_PATH` names.
 * Without one, the browser tests are skipped with `NO_CHROMIUM` as the reason.
 *
 * Each step a test takes is kept as a screenshot under `test/browser/screenshots/<suite>/`
 * (git-ignored), so that what a person would see can be looked at after the run.
 */
import { accessSync, constants } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, type BrowserContextOptions, chromium, type Page } from "playwright-core";
import { repoRoot } from "../../lib/local/paths.ts";

const CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"];

function executable(path: string | undefined): path is string {
  if (!path) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium to drive, if this machine has one. */
export const chromiumPath = CANDIDATES.find(executable);

export const NO_CHROMIUM =
  "no Chromium found (tried CHROMIUM_PATH, /usr/bin/chromium, /usr/bin/chromium-browser): install Debian's chromium (apt-get install -y chromium) to run the browser tests";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  /** A fresh page in a browser of its own, with a new profile (sized and emulated as asked). */
  page(options?: BrowserContextOptions): Promise<Page>;
  /** Closes every browser it opened and removes their profiles. */
  close(): Promise<void>;
}

/** Opens Chromium with a fresh `--user-data-dir` for each page asked for. */
export function launchChromium(): Browser {
  if (!chromiumPath) throw new Error(NO_CHROMIUM);
  const executablePath = chromiumPath;
  const opened: { context: BrowserContext; profile: string }[] = [];
  return {
    async page(options = {}) {
      const profile = await mkdtemp(join(tmpdir(), "payment-api-chromium-"));
      const context = await chromium.launchPersistentContext(profile, {
        ...options,
        executablePath,
        args: FLAGS,
      });
      opened.push({ context, profile });
      return context.pages()[0] ?? context.newPage();
    },
    async close() {
      for (const { context, profile } of opened.splice(0)) {
        await context.close();
        await rm(profile, { recursive: true, force: true });
      }
    },
  };
}

/** Takes numbered screenshots of a page, one per step, into `test/browser/screenshots/<suite>/`. */
export function screenshots(suite: string) {
  const folder = join(repoRoot, "test", "browser", "screenshots", suite);
  let step = 0;
  return async (page: Page, name: string): Promise<string> => {
    await mkdir(folder, { recursive: true });
    step += 1;
    const path = join(folder, `${String(step).padStart(2, "0")}-${name}.png`);
    await page.screenshot({ path, fullPage: true });
    return path;
  };
}
