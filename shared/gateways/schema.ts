import { booleanField, choice, currency, text } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";

/**
 * `POST /gateways/{gateway_name}/gateway-configurations` and `PUT /gateway-configurations/{id}`.
 * Client libraries also send `id` and `sub_accounts_enabled` (null): they are not used here.
 * `settings` are checked against the gateway's own (`catalogue.ts`) by the service.
 */
const blankIsAbsent = (value: unknown) => (value === "" ? undefined : value);

export const MAX_SETTINGS = 20;
export const MAX_SETTING_LENGTH = 500;

export const configurationInput = z.object({
  name: text(80),
  enabled: booleanField,
  default_currency: z.preprocess(blankIsAbsent, z.optional(z.nullable(currency))),
  /** The currencies the configuration takes (routing skips it for others); empty or null: every one. */
  currencies: z.preprocess(
    (value) => (value === "" ? null : value),
    z.optional(
      z.nullable(
        z
          .array(currency, "must be a list of ISO 4217 currency codes")
          .check(z.maxLength(50, "must hold at most 50 currencies")),
      ),
    ),
  ),
  payment_method: choice(["card", "native-apm"] as const),
  settings: z.optional(
    z
      .record(
        z.string(),
        z
          .string("must be a string")
          .check(z.maxLength(MAX_SETTING_LENGTH, `must be at most ${MAX_SETTING_LENGTH} characters`)),
        "must be a dictionary of strings",
      )
      .check(
        z.refine(
          (pairs) => Object.keys(pairs).length <= MAX_SETTINGS,
          `must hold at most ${MAX_SETTINGS} settings`,
        ),
      ),
  ),
});

export type ConfigurationInput = z.output<typeof configurationInput>;
