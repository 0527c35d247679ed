import { type Agent, request } from "node:http";

/**
 * One HTTP request sent as given, bytes and all: any method with any body, paths and header values
 * no `fetch` would send (raw percent-encoding, latin1 header bytes), for tests of what attackers send.
 */
export interface RawRequest {
  method: string;
  /** The request target as sent: path and query, already encoded. */
  target: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}

export function sendRaw(baseUrl: string, raw: RawRequest, agent?: Agent): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const body = raw.body === undefined ? undefined : Buffer.from(raw.body);
  return new Promise((done, fail) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: raw.method,
        path: raw.target,
        headers: { ...raw.headers, ...(body ? { "content-length": String(body.length) } : {}) },
        ...(agent ? { agent } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          done({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        response.on("error", fail);
      },
    );
    outgoing.on("error", fail);
    outgoing.end(body);
  });
}
