import { CHECKOUT_KEY_PARAMETER } from "../../shared/checkout/link.ts";
import { checkoutNotFoundPage } from "../../shared/checkout/page.ts";
import { api } from "../../shared/http/api.ts";
import { showProductLink } from "../../shared/products/pay.ts";

/** GET /pay/{project_id}/{product_id}?key=…: a product's payment link (the key is the secret); makes nothing */
export const handler = api(
  (request) =>
    showProductLink(
      request.path.project_id ?? "",
      request.path.product_id ?? "",
      request.query[CHECKOUT_KEY_PARAMETER],
    ),
  { auth: "none", notFound: checkoutNotFoundPage },
);
