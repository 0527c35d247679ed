import { CARD_SCHEMES } from "../cards/card-number.ts";
import { amount } from "../money.ts";
import { countryCode, currency, integerField, metadata, requiredText, text } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";
import { MAX_ATTEMPTS, MAX_CHAIN, MAX_RULES } from "./rules.ts";

/**
 * Input rules of the routing routes: `PUT /routing-rules` (the document, `rules.ts` describes it) and
 * `POST /routing-rules/simulate`. Apart from `rules.ts` so that payments, which read rules, do not
 * carry these schemas.
 */
const MAX_LIST = 50;

const absent = (value: unknown) => (value === null || value === "" ? undefined : value);
const list = <T extends z.core.$ZodType>(item: T) =>
  z.preprocess(
    absent,
    z.optional(
      z.array(item, "must be a list").check(z.maxLength(MAX_LIST, `must hold at most ${MAX_LIST} items`)),
    ),
  );
const configurationId = z.string("must be a gateway configuration id").check(z.minLength(1, "is required"));
const attempts = z.preprocess(
  absent,
  z.optional(
    integerField.check(
      z.refine((value) => value >= 1 && value <= MAX_ATTEMPTS, `must be from 1 to ${MAX_ATTEMPTS}`),
    ),
  ),
);
const requireThreeDS = z.preprocess(
  (value) => (value === "true" ? true : value === "false" ? false : absent(value)),
  z.optional(z.boolean("must be a boolean")),
);

const conditions = z.object({
  currencies: list(currency),
  amount_min: z.preprocess(absent, z.optional(amount)),
  amount_max: z.preprocess(absent, z.optional(amount)),
  card_schemes: list(z.enum(CARD_SCHEMES, { error: `must be one of ${CARD_SCHEMES.join(", ")}` })),
  card_types: list(
    z.enum(["credit", "debit", "prepaid"], { error: "must be one of credit, debit, prepaid" }),
  ),
  card_countries: list(z.pipe(countryCode, z.string("must be a valid ISO 3166-1 alpha-2 country code"))),
  countries: list(z.pipe(countryCode, z.string("must be a valid ISO 3166-1 alpha-2 country code"))),
  initiator: z.preprocess(
    absent,
    z.optional(z.enum(["customer", "merchant"], { error: "must be one of customer, merchant" })),
  ),
  metadata: z.preprocess(
    absent,
    z.optional(
      z
        .record(
          z.string(),
          z.string("must be a string").check(z.maxLength(500, "must be at most 500 characters")),
          "must be a dictionary of strings",
        )
        .check(z.refine((pairs) => Object.keys(pairs).length <= 20, "must hold at most 20 pairs")),
    ),
  ),
});

const action = z.discriminatedUnion(
  "type",
  [
    z.object({
      type: z.literal("route"),
      gateway_configuration_ids: z
        .array(configurationId, "must be a list of gateway configuration ids")
        .check(
          z.minLength(1, "must name at least one configuration"),
          z.maxLength(MAX_CHAIN, `must name at most ${MAX_CHAIN} configurations`),
        ),
      max_attempts: attempts,
      require_three_d_s: requireThreeDS,
    }),
    z.object({
      type: z.literal("split"),
      splits: z
        .array(
          z.object({
            gateway_configuration_id: configurationId,
            weight: integerField.check(
              z.refine((value) => value >= 1 && value <= 1000, "must be from 1 to 1000"),
            ),
          }),
          "must be a list of {gateway_configuration_id, weight}",
        )
        .check(
          z.minLength(2, "must name at least two configurations"),
          z.maxLength(MAX_CHAIN, `must name at most ${MAX_CHAIN} configurations`),
        ),
      max_attempts: attempts,
      require_three_d_s: requireThreeDS,
    }),
    z.object({ type: z.literal("block"), reason: requiredText(255) }),
    z.object({ type: z.literal("require_three_d_s"), max_attempts: attempts }),
  ],
  { error: "must have a type: route, split, block or require_three_d_s" },
);

export const rulesInput = z.object({
  version: z.preprocess(absent, z.optional(integerField)),
  default_order: list(configurationId),
  rules: z.preprocess(
    (value) => value ?? [],
    z
      .array(
        z.object({
          id: z.preprocess(
            absent,
            z.optional(
              z
                .string("must be a string")
                .check(z.regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, - or _")),
            ),
          ),
          name: text(120),
          conditions: z.preprocess((value) => value ?? {}, conditions),
          action,
        }),
        "must be a list of rules",
      )
      .check(z.maxLength(MAX_RULES, `must hold at most ${MAX_RULES} rules`)),
  ),
});

export type RulesInput = z.output<typeof rulesInput>;

/** `POST /routing-rules/simulate`: a hypothetical card payment. */
export const simulationInput = z.object({
  amount,
  currency,
  card_id: z.preprocess(
    (value) => (value === "" || value === null ? undefined : value),
    z.optional(z.string("must be a card id")),
  ),
  iin: z.preprocess(
    (value) => (value === "" || value === null ? undefined : value),
    z.optional(
      z
        .string("must be the card's first 6 to 8 digits")
        .check(z.regex(/^\d{6,8}$/, "must be the card's first 6 to 8 digits")),
    ),
  ),
  country: countryCode,
  initiator: z.preprocess(
    (value) => (value === "" || value === null ? undefined : value),
    z.optional(z.enum(["customer", "merchant"], { error: "must be one of customer, merchant" })),
  ),
  metadata: z.preprocess((value) => (value === null ? undefined : value), metadata),
  gateway_configuration_id: z.preprocess(
    (value) => (value === "" || value === null ? undefined : value),
    z.optional(z.string("must be a gateway configuration id")),
  ),
});
