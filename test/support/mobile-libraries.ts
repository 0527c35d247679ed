import { randomUUID } from "node:crypto";
import * as z from "zod";

/**
 * What the Android and iOS client libraries send and decode, as `../shared/reference/
 * client-compatibility.md` ("The mobile client libraries") reads them from their public sources.
 * Tests drive the API through `mobileClient` exactly as an app does, and decode its answers with
 * the libraries' own requirements (`decodes`), so a field a library needs cannot go missing.
 */
export type Platform = "android" | "ios";

export interface MobileResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: asserted on field by field, or decoded by a schema
  body: any;
  /** The Idempotency-Key the request carried: a retry sends it again. */
  idempotencyKey: string | undefined;
}

/** One request as the library makes it; `retryOf` repeats an earlier request with its key. */
export interface MobileRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: Record<string, unknown>;
  retryOf?: MobileResponse;
}

/** Null fields are left out of bodies, as both libraries encode them. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== null && field !== undefined)
      .map(([key, field]) => [key, withoutNulls(field)]),
  );
}

export function mobileClient(url: string, projectId: string, platform: Platform) {
  const sessionId = randomUUID();
  const installationId = randomUUID();
  const headers: Record<string, string> = {
    authorization: `Basic ${Buffer.from(`${projectId}:`).toString("base64")}`,
    "content-type": "application/json",
    "accept-language": "en-GB",
    "session-id": sessionId,
    "installation-id": installationId,
    "product-version": platform === "android" ? "4.31.0" : "4.25.1",
    ...(platform === "android"
      ? {
          "user-agent": "Android/14 ProcessOut Android-Bindings/4.31.0",
          accept: "*/*",
          "device-system-name": "android",
          "device-system-version": "34",
        }
      : {
          "user-agent": "iOS/17.5 ProcessOut iOS-Bindings/4.25.1",
          "device-system-name": "iOS",
          "device-system-version": "17.5",
          "device-id": randomUUID(),
        }),
  };

  return async function send(request: MobileRequest): Promise<MobileResponse> {
    // Every POST, PUT and DELETE carries a fresh UUID Idempotency-Key, reused on retry.
    const idempotencyKey =
      request.method === "GET" ? undefined : (request.retryOf?.idempotencyKey ?? randomUUID());
    const response = await fetch(new URL(request.path, url), {
      method: request.method,
      headers: { ...headers, ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}) },
      ...(request.body ? { body: JSON.stringify(withoutNulls(request.body)) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text), idempotencyKey };
  };
}

/** The `device` object both libraries add to payment and token requests. */
export function deviceOf(platform: Platform) {
  return {
    app_language: "en",
    app_screen_width: 1179,
    app_screen_height: 2556,
    ...(platform === "android" ? { app_time_zone_offset: 60 } : { app_timezone_offset: 60 }),
    channel: platform,
  };
}

/**
 * The `gway_req_` answers, byte for byte as the libraries build them: Android encodes with Moshi
 * (nulls omitted; the challenge bodies with spaces, `{ "transStatus": "Y" }`), iOS with
 * JSONEncoder. Their sandbox test handler answers the fingerprint with empty strings and an empty
 * ephemeral key.
 */
export const testHandler = {
  fingerprint(): string {
    const body =
      '{"deviceChannel":"app","sdkAppID":"","sdkEncData":"","sdkEphemPubKey":{},"sdkReferenceNumber":"","sdkTransID":""}';
    return gatewayRequest({ body });
  },
  challenge(platform: Platform, approved: boolean): string {
    const status = approved ? "Y" : "N";
    const body = platform === "android" ? `{ "transStatus": "${status}" }` : `{"transStatus":"${status}"}`;
    return gatewayRequest({ body });
  },
  /** The web fingerprint's timeout, with the page's address (Android's `fingerprint` action handler). */
  fingerprintTimeout(url: string): string {
    return gatewayRequest({ body: '{ "threeDS2FingerprintTimeout": true }', url });
  },
};

export function gatewayRequest(envelope: { body: string; url?: string }): string {
  return `gway_req_${Buffer.from(JSON.stringify(envelope)).toString("base64")}`;
}

/** The iOS library parses dates only in this form. */
const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const date = z.string().regex(DATE);
const optionalString = z.string().nullable().optional();

/** What each library requires to decode an answer: missing or mistyped fields fail the decode. */
export const decodes = {
  ios: {
    /** `POCard`: non-optional fields as declared, optional ones nullable. */
    card: z.object({
      id: z.string(),
      project_id: z.string(),
      scheme: z.string(),
      co_scheme: optionalString,
      preferred_scheme: optionalString,
      type: z.string(),
      bank_name: optionalString,
      brand: optionalString,
      category: optionalString,
      iin: z.string(),
      last_4_digits: z.string(),
      fingerprint: z.string().nullable().optional(),
      exp_month: z.number().int(),
      exp_year: z.number().int(),
      cvc_check: z.enum(["pending", "unavailable", "unknown", "failed", "passed"]),
      avs_check: z.string(),
      name: optionalString,
      expires_soon: z.boolean(),
      metadata: z.record(z.string(), z.string()),
      sandbox: z.boolean(),
      created_at: date,
      updated_at: date,
    }),
    /** `POCardIssuerInformation`. */
    cardInformation: z.object({
      scheme: z.string(),
      co_scheme: optionalString,
      type: optionalString,
      bank_name: optionalString,
      brand: optionalString,
      category: optionalString,
    }),
    /** `POCustomerToken`. */
    token: z.object({
      id: z.string(),
      customer_id: z.string(),
      gateway_configuration_id: optionalString,
      card_id: optionalString,
      type: z.string(),
      description: optionalString,
      verification_status: z.enum(["success", "pending", "failed", "not-requested", "unknown"]),
      return_url: optionalString,
      cancel_url: optionalString,
      is_default: z.boolean().optional(),
      created_at: date,
    }),
    /** Every body carries `success`; errors `error_type`, `message` and `invalid_fields`. */
    success: z.object({ success: z.literal(true) }),
    error: z.object({
      success: z.literal(false),
      error_type: z.string(),
      message: z.string(),
      invalid_fields: z
        .array(z.object({ name: z.string(), message: z.string() }))
        .nullable()
        .optional(),
    }),
  },
  android: {
    /** `POCard`: id, project_id, expires_soon, sandbox and both dates are required. */
    card: z.object({
      id: z.string(),
      project_id: z.string(),
      expires_soon: z.boolean(),
      metadata: z.record(z.string(), z.string()).nullable().optional(),
      sandbox: z.boolean(),
      created_at: date,
      updated_at: date,
    }),
    token: z.object({ id: z.string(), customer_id: z.string(), created_at: date }),
    /** Errors are read by status, and must carry `error_type`. */
    error: z.object({ error_type: z.string() }),
  },
  /**
   * `customer_action`: absent or null when there is nothing to do; otherwise a type the libraries
   * handle and a value that is never null.
   */
  customerAction: z
    .object({
      type: z.enum(["url", "redirect", "fingerprint", "fingerprint-mobile", "challenge-mobile"]),
      value: z.string(),
      metadata: z.record(z.string(), z.unknown()).optional(),
    })
    .nullable()
    .optional(),
  /** The `fingerprint-mobile` value's JSON (`PO3DS2Configuration`): all but `scheme` required. */
  directoryServer: z.object({
    directoryServerID: z.string(),
    directoryServerPublicKey: z.string(),
    threeDSServerTransID: z.string(),
    directoryServerRootCAs: z.array(z.string()),
    messageVersion: z.string(),
    scheme: z.string().optional(),
  }),
  /** The `challenge-mobile` value's JSON (`PO3DS2Challenge`). */
  acsChallenge: z.object({
    acsTransID: z.string(),
    acsReferenceNumber: z.string(),
    acsSignedContent: z.string(),
    threeDSServerTransID: z.string(),
  }),
};

/** A `fingerprint-mobile` or `challenge-mobile` value, as the libraries decode it (base64 JSON). */
export function actionValue(value: string): unknown {
  return JSON.parse(Buffer.from(value, "base64").toString("utf8"));
}
