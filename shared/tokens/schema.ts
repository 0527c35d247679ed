import { CARD_SCHEMES } from "../cards/card-number.ts";
import { sourceField, threeDSFields } from "../three-d-s/schema.ts";
import { booleanField, choice, httpUrl, metadata, text } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";
import { webhookUrl } from "../webhooks/url-field.ts";

/**
 * What customer token requests take. `source` is a card id (`card_…`) of the same environment;
 * `verify=true` asks for the card to be verified with the gateway. `set_default=true` makes the
 * token the customer's default. Other keys client libraries send (`settings`, `verify_metadata`,
 * `summary`, `invoice_return_url`) are accepted and ignored.
 */
const tokenFields = {
  metadata,
  description: text(255),
  return_url: httpUrl,
  cancel_url: httpUrl,
  webhook_url: webhookUrl,
  set_default: booleanField,
};

const source = z.preprocess(
  (value) => (value === "" ? undefined : value),
  z.optional(z.string("must be the id of a card").check(z.maxLength(100, "must be the id of a card"))),
);

export const createTokenInput = z.object({ source, verify: booleanField, ...tokenFields });

/**
 * `PUT`: `source` may also be a browser's or app's answer to the verification's 3DS round
 * (`gway_req_…`); the mobile libraries also send `verify`, `invoice_id` and
 * `third_party_sdk_version`, accepted (a `PUT` with a source always verifies).
 */
export const updateTokenInput = z.object({
  source: sourceField("the id of a card"),
  preferred_scheme: choice(CARD_SCHEMES),
  ...threeDSFields,
  ...tokenFields,
});

export type CreateTokenFields = z.output<typeof createTokenInput>;
export type TokenFields = z.output<typeof updateTokenInput>;

/** The fields of a token a request may change (besides its source). */
export const TOKEN_FIELD_NAMES = [
  "metadata",
  "description",
  "return_url",
  "cancel_url",
  "webhook_url",
] as const;
