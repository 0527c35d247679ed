import { docsAsset, isDocsAsset } from "../../shared/docs/assets.ts";
import { api } from "../../shared/http/api.ts";
import { notFound } from "../../shared/http/errors.ts";
import { content } from "../../shared/http/reply.ts";

/** GET /docs/{docs_file}: a file of the API reference page, as its package ships it, gzip-encoded. */
export const handler = api(
  async (request) => {
    const name = request.path.docs_file ?? "";
    if (!isDocsAsset(name)) throw notFound("docs-asset", name);
    const asset = docsAsset(name);
    return content(200, asset.gzipped, {
      contentType: asset.contentType,
      headers: { "content-encoding": "gzip", "cache-control": "public, max-age=86400" },
    });
  },
  { auth: "none" },
);
