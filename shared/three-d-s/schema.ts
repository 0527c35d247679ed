import type { ThreeDSChannel } from "../gateways/connector.ts";
import { booleanField, text } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";
import { GATEWAY_REQUEST_PREFIX, MAX_GATEWAY_REQUEST_LENGTH } from "./gateway-request.ts";

/**
 * The request fields of a card payment or verification that a browser or app sends for 3-D Secure,
 * shared by payments (authorize, capture) and customer tokens (`PUT`). `null` and `""` mean unset.
 */
const absentIfNull = (value: unknown) => (value === null || value === "" ? undefined : value);

/** Ids are short; a `gway_req_` answer is longer (an SDK's ephemeral key and encrypted data). */
export const MAX_ID_SOURCE_LENGTH = 100;

/** A card id (or a customer token id, where one pays), or a browser's or app's 3DS answer. */
export const sourceField = (description: string) =>
  z.preprocess(
    absentIfNull,
    z.optional(
      z.string(`must be ${description} or a gateway request`).check(
        z.maxLength(MAX_GATEWAY_REQUEST_LENGTH, `must be at most ${MAX_GATEWAY_REQUEST_LENGTH} characters`),
        z.refine(
          (value) => value.length <= MAX_ID_SOURCE_LENGTH || value.startsWith(GATEWAY_REQUEST_PREFIX),
          `must be ${description} or a gateway request`,
        ),
      ),
    ),
  );

/**
 * What the client libraries tell of the shopper's device. Only `channel` is used: `ios` and
 * `android` are the mobile libraries, whose 3DS2 SDK authenticates in the app; every other key
 * (screen size, language, time zone…) is accepted and dropped.
 */
const device = z.preprocess(
  absentIfNull,
  z.optional(
    z.object(
      {
        channel: z.preprocess(absentIfNull, z.optional(z.string("must be a string").check(z.maxLength(32)))),
      },
      "must be an object",
    ),
  ),
);

export const threeDSFields = {
  enable_three_d_s_2: z.preprocess(absentIfNull, booleanField),
  device,
  third_party_sdk_version: text(255),
};

export interface ThreeDSFields {
  device?: { channel?: string | undefined } | undefined;
  enable_three_d_s_2?: boolean | undefined;
}

/**
 * Where the cardholder authenticates, should the issuer ask: in the mobile libraries' 3DS2 SDK
 * (`device.channel` `ios` or `android`), in a browser with 3DS2 (`enable_three_d_s_2`, as the web
 * library sends), otherwise in a browser with the challenge page (3DS1, `customer_action` `url`).
 */
export function threeDSChannelOf(fields: ThreeDSFields): ThreeDSChannel {
  const channel = fields.device?.channel?.toLowerCase();
  if (channel === "ios" || channel === "android") return "app";
  return fields.enable_three_d_s_2 ? "browser-3ds2" : "browser";
}

/** Whether the caller asked for 3DS explicitly (a browser with 3DS2, or an app). */
export function asksForThreeDS(fields: ThreeDSFields): boolean {
  return threeDSChannelOf(fields) !== "browser";
}
