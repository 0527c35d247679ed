import { api } from "../../shared/http/api.ts";
import type { Input } from "../../shared/http/input.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfProducts } from "../../shared/products/service.ts";

/**
 * The Python client writes the listing options it was not given as its literal `None`
 * (`?expand=None&filter=None&limit=10&end_before=None&start_after=None`): not given.
 */
const withoutPythonNone = (query: Input): Input =>
  Object.fromEntries(Object.entries(query).filter(([, value]) => value !== "None"));

/** GET /products */
export const handler = api(async (request) => {
  const page = readPageRequest({ query: withoutPythonNone(request.query), body: request.body }, "product");
  return pageReply("products", await pageOfProducts(request.caller, page), page);
});
