import { EXPORTS_BUCKET_VARIABLE, EXPORTS_DIR_VARIABLE } from "../names.ts";
import { folderStorage } from "./folder.ts";
import type { ExportStorage } from "./port.ts";
import { s3Storage } from "./s3.ts";

export { EXPORTS_BUCKET_VARIABLE, EXPORTS_DIR_VARIABLE };

let storage: ExportStorage | undefined;

/** The export storage of this container, from its configuration, made once; a missing one fails by name. */
export function exportStorage(): ExportStorage {
  if (!storage) {
    const bucket = process.env[EXPORTS_BUCKET_VARIABLE];
    const folder = process.env[EXPORTS_DIR_VARIABLE];
    if (bucket) storage = s3Storage(bucket);
    else if (folder) storage = folderStorage(folder);
    else {
      throw new Error(
        `Missing required environment variable ${EXPORTS_BUCKET_VARIABLE} (an S3 bucket, in AWS) or ${EXPORTS_DIR_VARIABLE} (a local folder)`,
      );
    }
  }
  return storage;
}

/** Forgets the storage made (tests that change the variables). */
export function resetExportStorage(): void {
  storage = undefined;
}
