import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/**
 * The files of the API reference page (`GET /docs/{docs_file}`), as the swagger-ui-dist package ships
 * them: nothing is loaded from anywhere else. In Lambda they are copied next to the function's
 * bundle when it is built (`files` of the route in `lib/topology.ts`), so no handler bundle carries
 * them; elsewhere (the local stack, tests) they are read from `node_modules`.
 */
export const DOCS_ASSETS = {
  "swagger-ui-bundle.js": { file: "swagger-ui-dist/swagger-ui-bundle.js", contentType: "text/javascript" },
  "swagger-ui.css": { file: "swagger-ui-dist/swagger-ui.css", contentType: "text/css" },
  "favicon-32x32.png": { file: "swagger-ui-dist/favicon-32x32.png", contentType: "image/png" },
} as const satisfies Record<string, { file: string; contentType: string }>;

export type DocsAssetName = keyof typeof DOCS_ASSETS;

export const isDocsAsset = (name: string): name is DocsAssetName => Object.hasOwn(DOCS_ASSETS, name);

/** The package files the route's function needs beside its bundle. */
export const DOCS_ASSET_FILES: readonly string[] = Object.values(DOCS_ASSETS).map((asset) => asset.file);

function assetPath(name: DocsAssetName): string {
  const { file } = DOCS_ASSETS[name];
  const taskRoot = process.env.LAMBDA_TASK_ROOT;
  if (taskRoot) return join(taskRoot, file.slice(file.lastIndexOf("/") + 1));
  return createRequire(import.meta.url).resolve(file);
}

export interface DocsAsset {
  contentType: string;
  /** Gzip-compressed: the bundle is 1.7 MB as shipped, about a quarter of that compressed. */
  gzipped: Buffer;
}

/** Read and compressed once per container. */
const loaded = new Map<DocsAssetName, DocsAsset>();

export function docsAsset(name: DocsAssetName): DocsAsset {
  let asset = loaded.get(name);
  if (!asset) {
    const content = readFileSync(assetPath(name));
    asset = { contentType: DOCS_ASSETS[name].contentType, gzipped: gzipSync(content, { level: 9 }) };
    loaded.set(name, asset);
  }
  return asset;
}
