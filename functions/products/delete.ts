import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { deleteProduct } from "../../shared/products/service.ts";

/** DELETE /products/{product_id} */
export const handler = api(async (request) => {
  await deleteProduct(request.caller, request.path.product_id ?? "");
  return ok({});
});
