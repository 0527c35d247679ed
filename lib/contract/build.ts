/**
 * `tsx lib/contract/build.ts <file>`: writes the OpenAPI document into `<file>`, as the bundling of
 * the function that serves it does (`apiDocument` of its route in `lib/topology.ts`). Its server is
 * left empty: the function sets its own API's address (`shared/docs/openapi.ts`).
 */
import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { openApiDocument } from "./document.ts";

const file = process.argv[2];
if (!file) throw new Error("Usage: tsx lib/contract/build.ts <file>");
await writeFile(resolve(file), JSON.stringify(openApiDocument("")));
