/**
 * A merchant's server calling the API, as the benches do: JSON in and out, HTTP Basic with the
 * environment's private key; a non-2xx answer throws with its body.
 */
// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, as a merchant script reads JSON
export type Json = Record<string, any>;

export function merchantClient(url: string, projectId: string, key: string) {
  const authorization = `Basic ${Buffer.from(`${projectId}:${key}`).toString("base64")}`;
  return async (method: string, path: string, body?: unknown): Promise<Json> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as Json;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
}
