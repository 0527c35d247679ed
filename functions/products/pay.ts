import { CHECKOUT_KEY_PARAMETER } from "../../shared/checkout/link.ts";
import { checkoutNotFoundPage } from "../../shared/checkout/page.ts";
import { api } from "../../shared/http/api.ts";
import { payProductLink, VISIT_PARAMETER } from "../../shared/products/pay.ts";

/** POST /pay/{project_id}/{product_id}: the link's "Pay" button: a new invoice, then 303 to its checkout page */
export const handler = api(
  (request) =>
    payProductLink(request.path.project_id ?? "", request.path.product_id ?? "", {
      key: request.body[CHECKOUT_KEY_PARAMETER] ?? request.query[CHECKOUT_KEY_PARAMETER],
      visit: request.body[VISIT_PARAMETER],
      requestId: request.requestId,
    }),
  { auth: "none", notFound: checkoutNotFoundPage },
);
