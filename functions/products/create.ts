import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { createProduct } from "../../shared/products/service.ts";

/** POST /products */
export const handler = api(
  async (request) => {
    const product = await createProduct(request.caller, request.body, (presented) =>
      request.commitWith(ok({ product: presented })),
    );
    return ok({ product });
  },
  // The whole change is one transaction: it claims the Idempotency-Key too (one round trip).
  { idempotency: "in-the-write" },
);
