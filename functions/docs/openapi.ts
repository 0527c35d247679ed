import { config } from "../../shared/config.ts";
import { openApiDocument } from "../../shared/docs/openapi.ts";
import { api } from "../../shared/http/api.ts";
import { content } from "../../shared/http/reply.ts";

/** Made once per container: it depends on nothing but the code and the API's address. */
let text: string | undefined;

/** GET /openapi.json: the OpenAPI 3.1 document, generated from the topology and the contract. */
export const handler = api(
  async () => {
    text ??= JSON.stringify(await openApiDocument(config.apiUrl));
    return content(200, text, {
      contentType: "application/json; charset=utf-8",
      headers: { "cache-control": "public, max-age=300" },
    });
  },
  { auth: "none" },
);
