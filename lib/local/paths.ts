import { fileURLToPath } from "node:url";

/** The repository's root directory (handler entries and the DynamoDB Local cache are relative to it). */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
