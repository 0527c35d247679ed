import { type Readable, Transform } from "node:stream";

/**
 * Where export files are kept: the stage's S3 bucket in AWS (`s3.ts`), a folder in the local stack
 * and the tests (`folder.ts`), chosen by configuration (`index.ts`). Files are written as streams, so
 * an export is never held whole in memory.
 */
export interface ExportStorage {
  /**
   * Writes `body` under `key` (replacing a file of an earlier, interrupted run): what was written
   * becomes visible only once complete.
   */
  write(key: string, body: Readable): Promise<StoredFile>;
  /** The file under `key`, as a stream. */
  read(key: string): Promise<Readable>;
}

export interface StoredFile {
  /** Bytes written. */
  size: number;
  /** Where the file is: `s3://bucket/key`, or the file's path. */
  location: string;
}

/** Passes bytes on unchanged, counting them: the size of what was written. */
export function byteCounter(): Transform & { readonly bytes: number } {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return Object.defineProperty(counter, "bytes", { get: () => bytes }) as Transform & {
    readonly bytes: number;
  };
}
