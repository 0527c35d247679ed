import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { byteCounter, type ExportStorage } from "./port.ts";

/**
 * Export files in a folder (`EXPORTS_DIR`; the local stack's `.data/exports/`): written to a
 * temporary file beside the final one, then renamed, so a file is either whole or absent.
 */
export function folderStorage(root: string): ExportStorage {
  const base = resolve(root);
  const pathOf = (key: string) => {
    const path = resolve(base, key);
    if (!path.startsWith(base + sep)) throw new Error(`The export key ${key} leaves the exports folder`);
    return path;
  };
  return {
    async write(key, body) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const partial = join(dirname(path), `.${randomBytes(6).toString("hex")}.partial`);
      const counter = byteCounter();
      try {
        await pipeline(body, counter, createWriteStream(partial, { mode: 0o600 }));
        await rename(partial, path);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      return { size: counter.bytes, location: path };
    },
    async read(key) {
      return createReadStream(pathOf(key)) as Readable;
    },
  };
}
