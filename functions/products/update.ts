import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { changeProduct } from "../../shared/products/service.ts";

/** PUT /products/{product_id} */
export const handler = api(async (request) =>
  ok({ product: await changeProduct(request.caller, request.path.product_id ?? "", request.body) }),
);
