import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { s3Storage } from "../../shared/exports/storage/s3.ts";

/**
 * The S3 adapter of the export storage against a double speaking S3's REST protocol (path style):
 * PutObject for a small file, the multipart upload (create, parts, complete) `@aws-sdk/lib-storage`
 * makes of a file over one part, and GetObject to read it back. The double assembles the parts in
 * their order, as S3 does, so the bytes read are what S3 would hold.
 */
interface Upload {
  key: string;
  parts: Map<number, Buffer>;
}

function s3Double() {
  const objects = new Map<string, Buffer>();
  const uploads = new Map<string, Upload>();
  const requests: string[] = [];
  const read = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://s3");
    const key = decodeURIComponent(url.pathname.replace(/^\/[^/]+\//, ""));
    const body = await read(request);
    const etag = `"${createHash("md5").update(body).digest("hex")}"`;
    const xml = (content: string) => {
      response.writeHead(200, { "content-type": "application/xml" });
      response.end(`<?xml version="1.0" encoding="UTF-8"?>${content}`);
    };
    if (request.method === "POST" && url.searchParams.has("uploads")) {
      requests.push("CreateMultipartUpload");
      const id = `upload-${uploads.size + 1}`;
      uploads.set(id, { key, parts: new Map() });
      return xml(
        `<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>${key}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
      );
    }
    const uploadId = url.searchParams.get("uploadId");
    if (request.method === "PUT" && uploadId) {
      requests.push("UploadPart");
      uploads.get(uploadId)?.parts.set(Number(url.searchParams.get("partNumber")), body);
      response.writeHead(200, { etag });
      return response.end();
    }
    if (request.method === "POST" && uploadId) {
      requests.push("CompleteMultipartUpload");
      const upload = uploads.get(uploadId) as Upload;
      const numbers = [...upload.parts.keys()].sort((a, b) => a - b);
      objects.set(upload.key, Buffer.concat(numbers.map((number) => upload.parts.get(number) as Buffer)));
      uploads.delete(uploadId);
      return xml(
        `<CompleteMultipartUploadResult><Key>${upload.key}</Key><ETag>${etag}</ETag></CompleteMultipartUploadResult>`,
      );
    }
    if (request.method === "DELETE" && uploadId) {
      requests.push("AbortMultipartUpload");
      uploads.delete(uploadId);
      response.writeHead(204);
      return response.end();
    }
    if (request.method === "PUT") {
      requests.push("PutObject");
      objects.set(key, body);
      response.writeHead(200, { etag });
      return response.end();
    }
    if (request.method === "GET" && objects.has(key)) {
      requests.push("GetObject");
      const object = objects.get(key) as Buffer;
      response.writeHead(200, { "content-length": String(object.length), "content-type": "text/csv" });
      return response.end(object);
    }
    response.writeHead(404, { "content-type": "application/xml" });
    response.end("<Error><Code>NoSuchKey</Code></Error>");
  });
  return { server, objects, uploads, requests };
}

describe("the S3 export storage", () => {
  const double = s3Double();
  let server: Server;
  let client: S3Client;
  beforeAll(async () => {
    server = double.server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    client = new S3Client({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      forcePathStyle: true,
      region: "eu-west-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    });
  });
  afterAll(async () => {
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("writes a small file in one PutObject, and reads it back", async () => {
    const storage = s3Storage("exports-bucket", client);
    const stored = await storage.write(
      "test-proj_1/small.csv",
      Readable.from(["id,amount\r\n", "tr_1,10.00\r\n"]),
    );
    expect(stored).toEqual({ size: 23, location: "s3://exports-bucket/test-proj_1/small.csv" });
    expect(double.objects.get("test-proj_1/small.csv")?.toString()).toBe("id,amount\r\ntr_1,10.00\r\n");
    expect(await text(await storage.read("test-proj_1/small.csv"))).toBe("id,amount\r\ntr_1,10.00\r\n");
  });

  it("streams a file over one part as a multipart upload, whose parts make the file", async () => {
    double.requests.length = 0;
    const storage = s3Storage("exports-bucket", client);
    const line = (index: number) => `tr_${String(index).padStart(10, "0")},${(index % 1000) + 0.5}\r\n`;
    const lines = 600_000;
    async function* rows() {
      for (let index = 0; index < lines; index++) yield line(index);
    }
    const expected = createHash("sha256");
    let expectedSize = 0;
    for (let index = 0; index < lines; index++) {
      expected.update(line(index));
      expectedSize += line(index).length;
    }
    const stored = await storage.write("test-proj_1/large.csv", Readable.from(rows()));
    expect(expectedSize).toBeGreaterThan(10 * 1024 * 1024);
    expect(stored.size).toBe(expectedSize);
    const object = double.objects.get("test-proj_1/large.csv") as Buffer;
    expect(createHash("sha256").update(object).digest("hex")).toBe(expected.digest("hex"));
    expect(double.requests[0]).toBe("CreateMultipartUpload");
    expect(double.requests.filter((name) => name === "UploadPart").length).toBe(
      Math.ceil(expectedSize / (5 * 1024 * 1024)),
    );
    expect(double.requests.at(-1)).toBe("CompleteMultipartUpload");
    expect(double.uploads.size).toBe(0);
  });

  it("aborts the upload when the rows fail, and leaves no object", async () => {
    double.requests.length = 0;
    const storage = s3Storage("exports-bucket", client);
    async function* failing() {
      for (let part = 0; part < 3; part++) {
        yield "x".repeat(6 * 1024 * 1024);
        // Time for the upload of what was read to begin, as a slow page of rows gives it.
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      throw new Error("the table went away");
    }
    await expect(storage.write("test-proj_1/broken.csv", Readable.from(failing()))).rejects.toThrow();
    expect(double.objects.has("test-proj_1/broken.csv")).toBe(false);
    // The multipart upload begun with the first part is aborted: no parts left to pay for.
    expect(double.requests).toContain("CreateMultipartUpload");
    expect(double.uploads.size).toBe(0);
  });
});
