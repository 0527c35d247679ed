/**
 * How every Lambda handler is bundled. The CDK stack (through `NodejsFunction`) and the benchmark
 * (through `bundleSize`) use these very options, so the size the benchmark reports is the size
 * that is deployed.
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BundlingOptions, OutputFormat, SourceMapMode } from "aws-cdk-lib/aws-lambda-nodejs";
import { type BuildOptions, build } from "esbuild";

/** The repository root: entries, the lock file and `tsconfig.json` are resolved against it. */
export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * ESM output has no `require`, `__dirname` nor `__filename`, but CommonJS dependencies bundled into
 * it still use them, some as soon as they load (ssh2 resolves a helper's path from `__dirname`: the
 * SFTP delivery's bundle failed at load without it, which only loading the built bundle shows). The
 * import is aliased so it cannot collide with a `createRequire` binding esbuild keeps from bundled
 * code; the bundle's own directory stands for `__dirname` (Node 22's `import.meta.dirname`).
 */
export const esmRequireBanner =
  'import { createRequire as __topLevelCreateRequire } from "node:module"; const require = __topLevelCreateRequire(import.meta.url); const __filename = import.meta.filename; const __dirname = import.meta.dirname;';

/** esbuild settings shared by every handler bundle (the API `build` accepts them as they are). */
export const esbuildOptions = {
  bundle: true,
  platform: "node",
  target: "node22",
  format: "esm",
  outExtension: { ".js": ".mjs" },
  // Prefer the ESM build of dependencies that ship both: it tree-shakes better.
  mainFields: ["module", "main"],
  minify: true,
  // Linked source map; stack traces only need the mappings, not a copy of the sources.
  sourcemap: true,
  sourcesContent: false,
  banner: { js: esmRequireBanner },
  // The nodejs22.x runtime provides the AWS SDK v3: bundling it would only add weight. ssh2 (SFTP
  // delivery of exports) tries its optional native addons (`*.node`, `cpu-features`) inside a
  // try/catch and uses its JavaScript crypto without them: they stay out of the bundle.
  external: ["@aws-sdk/*", "cpu-features", "*.node"],
} as const satisfies BuildOptions;

/** The same settings for `NodejsFunction` (`OutputFormat.ESM` writes `index.mjs`). */
export const nodejsBundling: BundlingOptions = {
  format: OutputFormat.ESM,
  target: esbuildOptions.target,
  mainFields: [...esbuildOptions.mainFields],
  minify: esbuildOptions.minify,
  sourceMap: esbuildOptions.sourcemap,
  sourceMapMode: SourceMapMode.DEFAULT,
  sourcesContent: esbuildOptions.sourcesContent,
  banner: esbuildOptions.banner.js,
  externalModules: [...esbuildOptions.external],
};

/**
 * Environment every bundled function needs: Node only applies source maps to stack traces when asked.
 *
 * Kept for every function, on these figures (`tsx bench/bundles.ts`, Node 22, the largest bundle,
 * subscriptions/create, and its 355 KiB map): at load Node reads and parses the map, about 2.5 ms,
 * lost in the noise of a 200 ms module load (with and without the flag alike, within ±5 %); the first
 * `error.stack` a container formats decodes the map, about 40 ms instead of under 1 ms, and every
 * later one takes 0.1 to 0.25 ms instead of 0.02. Stacks are only formatted for what is logged as
 * unexpected (a 500, a failed background record, a failed gateway call), where a stack that names our
 * own files and lines is worth 40 ms once per container; a request without an unexpected error
 * formats none.
 */
export const bundlingEnvironment: Readonly<Record<string, string>> = {
  NODE_OPTIONS: "--enable-source-maps",
};

/**
 * The build of `entry` (absolute, or relative to the repository root, e.g. `handlerEntry(handler)`)
 * with the deployment options, into `outdir`, named as NodejsFunction names it (`index.mjs` and
 * `index.mjs.map`: the source map comment at the end of the bundle holds the name).
 */
export function handlerBuildOptions(entry: string, outdir: string): BuildOptions {
  return {
    ...esbuildOptions,
    entryPoints: [resolve(projectRoot, entry)],
    absWorkingDir: projectRoot,
    outdir,
    entryNames: "index",
    logLevel: "silent",
  };
}

/**
 * Bundles `entry` in memory with the deployment options and returns the size in bytes of the
 * JavaScript output, source map excluded.
 */
export async function bundleSize(entry: string): Promise<number> {
  // Nothing is written (`write: false`); esbuild only needs a place to name the outputs.
  const result = await build({
    ...handlerBuildOptions(entry, resolve(projectRoot, ".cache", "bundle-size")),
    write: false,
  });
  return (result.outputFiles ?? [])
    .filter((file) => file.path.endsWith(".mjs"))
    .reduce((total, file) => total + file.contents.byteLength, 0);
}
