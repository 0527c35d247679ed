import type { Readable } from "node:stream";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { byteCounter, type ExportStorage } from "./port.ts";

/**
 * Export files in the stage's S3 bucket (`EXPORTS_BUCKET`), streamed up as a multipart upload
 * (`@aws-sdk/lib-storage`): parts of 5 MiB, at most 4 in flight, so a file of any size takes about
 * 20 MiB of memory. An object appears only when its upload completes; a failed upload is aborted.
 */
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 4;

let client: S3Client | undefined;

/** `s3` is the container's client unless given (a test's, pointed at a double). */
export function s3Storage(bucket: string, given?: S3Client): ExportStorage {
  client ??= given ? undefined : new S3Client({});
  const s3 = given ?? (client as S3Client);
  return {
    async write(key, body) {
      const counter = byteCounter();
      body.on("error", (error) => counter.destroy(error));
      body.pipe(counter);
      const upload = new Upload({
        client: s3,
        params: { Bucket: bucket, Key: key, Body: counter, ContentType: "text/csv; charset=utf-8" },
        partSize: PART_SIZE,
        queueSize: QUEUE_SIZE,
        leavePartsOnError: false,
      });
      await upload.done();
      return { size: counter.bytes, location: `s3://${bucket}/${key}` };
    },
    async read(key) {
      const { Body } = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!Body) throw new Error(`The export file ${key} is empty in ${bucket}`);
      return Body as Readable;
    },
  };
}
