import { Agent, request } from "node:http";

/**
 * A merchant's server calling the API, as the benches do: JSON in and out, HTTP Basic with the
 * environment's private key; a non-2xx answer throws with its body.
 *
 * Requests go through `node:http` on kept-alive connections, as a merchant's server keeps them: the
 * client's own cost stays small beside the API's (the `fetch` of Node, undici, took about a
 * millisecond of CPU a request here, paid in the same process as the in-process stack the bench
 * measures).
 */
// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, as a merchant script reads JSON
export type Json = Record<string, any>;

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One HTTP request on a kept-alive connection: its status and its body as text. */
export function send(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method,
        agent,
        headers: body === undefined ? headers : { ...headers, "content-length": Buffer.byteLength(body) },
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("end", () =>
          resolve({ status: incoming.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
        );
        incoming.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

export function merchantClient(url: string, projectId: string, key: string) {
  const authorization = `Basic ${Buffer.from(`${projectId}:${key}`).toString("base64")}`;
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Json> => {
    const answer = await send(
      url,
      method,
      path,
      { authorization, "content-type": "application/json", ...headers },
      body === undefined ? undefined : JSON.stringify(body),
    );
    const json = JSON.parse(answer.text) as Json;
    if (answer.status < 200 || answer.status >= 300)
      throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(json)}`);
    return json;
  };
}
