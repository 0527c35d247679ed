import { CHECKOUT_KEY_PARAMETER } from "../../shared/checkout/link.ts";
import { checkoutNotFoundPage } from "../../shared/checkout/page.ts";
import { showCheckout } from "../../shared/checkout/service.ts";
import { api } from "../../shared/http/api.ts";

/** GET /checkout/{project_id}/{invoice_id}?key=…: the invoice's hosted checkout page (the key is the secret). */
export const handler = api(
  (request) =>
    showCheckout(
      request.path.project_id ?? "",
      request.path.invoice_id ?? "",
      request.query[CHECKOUT_KEY_PARAMETER],
    ),
  { auth: "none", notFound: checkoutNotFoundPage },
);
