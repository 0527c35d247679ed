import { expandAnswer } from "../../shared/expansion/answer.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { invoiceFromProduct } from "../../shared/products/service.ts";

/** POST /products/{product_id}/invoices: a new invoice from the product, as POST /invoices makes one */
export const handler = api(
  async (request) => {
    const invoice = await invoiceFromProduct(request.caller, request.path.product_id ?? "", (presented) =>
      request.commitWith(ok({ invoice: presented })),
    );
    return ok({ invoice });
  },
  // The invoice's transaction is the whole change: it claims the Idempotency-Key too, as POST /invoices.
  { expand: expandAnswer("invoice"), idempotency: "in-the-write" },
);
