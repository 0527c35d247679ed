import { readFile } from "node:fs/promises";
import { join } from "node:path";

/** The document's file beside the bundle of the function that serves it, in Lambda. */
export const OPENAPI_DOCUMENT_FILE = "openapi.json";

type Generator = typeof import("../../lib/contract/document.ts");
/**
 * Named by a variable, which esbuild does not follow: no bundle carries the generator (the contract,
 * every schema and zod's JSON Schema conversion, 125 KiB, and some 50 ms on the first request).
 */
const GENERATOR: string = "../../lib/contract/document.ts";

/**
 * The OpenAPI document (`lib/contract/document.ts`), with `serverUrl` as its server. In Lambda it was
 * generated when the function was built (`lib/contract/build.ts`) and is read from beside the bundle;
 * elsewhere (the local stack, the tests) it is generated from the code as it is.
 */
export async function openApiDocument(serverUrl: string): Promise<Record<string, unknown>> {
  const taskRoot = process.env.LAMBDA_TASK_ROOT;
  if (!taskRoot) return ((await import(GENERATOR)) as Generator).openApiDocument(serverUrl);
  const built = JSON.parse(await readFile(join(taskRoot, OPENAPI_DOCUMENT_FILE), "utf8"));
  return { ...built, servers: [{ url: serverUrl }] };
}
