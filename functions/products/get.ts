import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { getProduct } from "../../shared/products/service.ts";

/** GET /products/{product_id} */
export const handler = api(async (request) =>
  ok({ product: await getProduct(request.caller, request.path.product_id ?? "") }),
);
