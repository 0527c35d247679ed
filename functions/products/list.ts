import { api } from "../../shared/http/api.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";
import { pageOfProducts } from "../../shared/products/service.ts";

/** GET /products */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "product");
  return pageReply("products", await pageOfProducts(request.caller, page), page);
});
