import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzip as gzipCallback } from "node:zlib";
import { notFound } from "./errors.ts";
import { type ContentReply, content } from "./reply.ts";

/**
 * The scripts and style sheets served to browsers at `/assets/<name>`, each built from its source in
 * `shared/browser/` (`lib/browser-assets.ts`). `payments.js` is the module merchants import from
 * their own pages, so its address is stable; browsers may keep an answer five minutes, so a new
 * version reaches them within that time. `dashboard.js` and `dashboard.css` are the dashboard's app
 * (`functions/dashboard-page`), which loads `dashboard-charts.js` (uPlot) when it draws a chart.
 */
export const BROWSER_ASSETS = {
  "payments.js": { source: "shared/browser/payments.ts" },
  "checkout.js": { source: "shared/browser/checkout.ts" },
  "dashboard.js": { source: "shared/browser/dashboard/main.ts" },
  "dashboard.css": { source: "shared/browser/dashboard/styles.css" },
  "dashboard-charts.js": { source: "shared/browser/dashboard/charts.ts" },
} as const satisfies Record<string, { source: string }>;

const CONTENT_TYPES = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
} as const;

export type BrowserAssetName = keyof typeof BROWSER_ASSETS;

/** Where the built assets are: the local stack's build folder, or the function's bundle in AWS. */
export const BROWSER_ASSETS_DIR_VARIABLE = "BROWSER_ASSETS_DIR";

const CACHE_SECONDS = 300;
const gzip = promisify(gzipCallback);
const loaded = new Map<string, Promise<Buffer>>();

/**
 * `GET /assets/{asset}`: a built script or style sheet, read and gzip-encoded once per container
 * (every browser takes gzip, as for the reference page's files: the dashboard's app goes from 51 to
 * 18 KiB on the wire).
 */
export async function serveAsset(name: string): Promise<ContentReply> {
  if (!Object.hasOwn(BROWSER_ASSETS, name)) throw notFound("asset", name);
  const folder = process.env[BROWSER_ASSETS_DIR_VARIABLE];
  if (!folder) throw new Error(`Missing required environment variable ${BROWSER_ASSETS_DIR_VARIABLE}`);
  let contents = loaded.get(name);
  if (!contents) {
    contents = readFile(join(folder, name)).then((file) => gzip(file, { level: 9 }));
    loaded.set(name, contents);
    // A failed read is not kept: the next request tries again.
    contents.catch(() => loaded.delete(name));
  }
  return content(200, await contents, {
    contentType: name.endsWith(".css") ? CONTENT_TYPES.css : CONTENT_TYPES.js,
    headers: { "content-encoding": "gzip", "cache-control": `public, max-age=${CACHE_SECONDS}` },
  });
}
