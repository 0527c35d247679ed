/**
 * The scripts the API serves to browsers (`GET /assets/{asset}`, `shared/http/assets.ts`), built
 * from `shared/browser/` by esbuild: the payments module merchants import (`payments.js`), the
 * hosted checkout page's script (`checkout.js`) and the dashboard's app (`dashboard.js`, with its
 * style sheet `dashboard.css`: Preact, htm and uPlot, bundled and minified). They are built into a folder that the assets
 * function serves: the local stack builds them when it starts (`lib/local/start.ts`); in AWS, the
 * assets function's bundling builds them into its own bundle (`lib/route-stacks.ts`). So no Lambda
 * bundle carries browser code but that function's, and its stays small.
 *
 * `tsx lib/browser-assets.ts <folder>` builds them into `<folder>`.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { BROWSER_ASSETS } from "../shared/http/assets.ts";
import { projectRoot } from "./bundling.ts";

export async function buildBrowserAssets(outdir: string): Promise<void> {
  await build({
    // `dashboard.js` and `dashboard.css` share their name: the extension comes from the source.
    entryPoints: Object.entries(BROWSER_ASSETS).map(([name, asset]) => ({
      in: resolve(projectRoot, asset.source),
      out: name.replace(/\.(js|css)$/, ""),
    })),
    outdir,
    absWorkingDir: projectRoot,
    bundle: true,
    format: "esm",
    platform: "browser",
    // Browsers of the last years: module scripts, `<dialog>`, optional chaining.
    target: ["chrome100", "firefox100", "safari15.4"],
    minify: true,
    legalComments: "none",
    logLevel: "silent",
  });
}

const invokedPath = process.argv[1];
if (invokedPath && import.meta.url === pathToFileURL(realpathSync(invokedPath)).href) {
  const outdir = process.argv[2];
  if (!outdir) throw new Error("Usage: tsx lib/browser-assets.ts <output folder>");
  await buildBrowserAssets(resolve(outdir));
}
