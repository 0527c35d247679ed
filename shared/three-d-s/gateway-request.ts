import { invalidField } from "../http/errors.ts";
import * as z from "../validation/zod.ts";

/**
 * `gway_req_…` sources: what a shopper's browser or app sends back after a 3DS2 step, as the client
 * libraries encode it: `gway_req_` + base64 of JSON `{"body": "<JSON string>", "url"?: "…"}` (older
 * libraries add `headers`, `method` and `gateway_configuration_id`). Read strictly: bounded in size,
 * base64 and JSON checked, the body one of the answers a step can have; anything else is a 400
 * naming `source`.
 *
 * - after a fingerprint (3DS Method) round: the mobile SDK's authentication request
 *   (`deviceChannel: "app"`, `sdkAppID`, `sdkEncData`, `sdkEphemPubKey`, `sdkReferenceNumber`,
 *   `sdkTransID`; the libraries' sandbox test handler sends them empty), the sandbox's own browser
 *   fingerprint page's completion (`threeDSCompInd`), or the libraries' timeout
 *   (`threeDS2FingerprintTimeout: true`, with the fingerprint page's `url` from a browser; the web
 *   library sends it as the form field `threeDSMethodData=<that JSON>`);
 * - after a challenge round: the SDK's result, `transStatus` `Y` or `N`.
 *
 * The answer is bound to its payment by the payments core: only the invoice whose transaction waits
 * for that kind of answer takes it, and an answer carrying a `url` must name that transaction's own
 * fingerprint page.
 */
export const GATEWAY_REQUEST_PREFIX = "gway_req_";
/** Far above any SDK's answer (an ephemeral key and encrypted device data): a few kilobytes. */
export const MAX_GATEWAY_REQUEST_LENGTH = 16_384;

export type ThreeDSAnswer =
  | { kind: "fingerprint"; completed: boolean; url: string | null }
  | { kind: "challenge"; approved: boolean };

export function isGatewayRequest(source: string): boolean {
  return source.startsWith(GATEWAY_REQUEST_PREFIX);
}

const text = (max: number) => z.string().check(z.maxLength(max));
const optionalText = (max: number) => z.optional(z.nullable(text(max)));

const envelope = z.strictObject({
  body: text(MAX_GATEWAY_REQUEST_LENGTH),
  url: optionalText(2048),
  headers: z.optional(z.nullable(z.record(z.string(), z.unknown()))),
  method: optionalText(16),
  gateway_configuration_id: optionalText(200),
});

const ephemeralKey = z.strictObject({
  kty: z.optional(z.string()),
  crv: z.optional(z.string()),
  x: z.optional(z.string()),
  y: z.optional(z.string()),
});

const sdkAuthentication = z.strictObject({
  deviceChannel: z.literal("app"),
  sdkAppID: text(256),
  sdkEncData: text(MAX_GATEWAY_REQUEST_LENGTH),
  sdkEphemPubKey: z.union([ephemeralKey, text(2048)]),
  sdkReferenceNumber: text(256),
  sdkTransID: text(256),
});

const challengeResult = z.strictObject({ transStatus: z.enum(["Y", "N"]) });
const fingerprintTimeout = z.strictObject({ threeDS2FingerprintTimeout: z.literal(true) });
const browserFingerprint = z.strictObject({ threeDSCompInd: z.enum(["Y", "N", "U"]) });

const malformed = (why: string) => invalidField("source", `is not a valid gateway request: ${why}`);

/** The 3DS answer a `gway_req_` source carries; a 400 naming `source` when it carries none. */
export function parseGatewayRequest(source: string): ThreeDSAnswer {
  if (source.length > MAX_GATEWAY_REQUEST_LENGTH)
    throw malformed(`it is longer than ${MAX_GATEWAY_REQUEST_LENGTH} characters`);
  const encoded = source.slice(GATEWAY_REQUEST_PREFIX.length);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) throw malformed("what follows gway_req_ is not base64");
  const bytes = Buffer.from(encoded.replaceAll("-", "+").replaceAll("_", "/"), "base64");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw malformed("it does not decode to UTF-8 text");
  }
  const parsedEnvelope = envelope.safeParse(parseJson(text, "its envelope is not JSON"));
  if (!parsedEnvelope.success) throw malformed("it is not {body, url?}");
  const { body, url } = parsedEnvelope.data;
  const answer = parseJson(methodData(body) ?? body, "its body is not JSON");
  if (challengeResult.safeParse(answer).success) {
    return { kind: "challenge", approved: (answer as { transStatus: string }).transStatus === "Y" };
  }
  if (fingerprintTimeout.safeParse(answer).success)
    return { kind: "fingerprint", completed: false, url: url ?? null };
  if (browserFingerprint.safeParse(answer).success) {
    return {
      kind: "fingerprint",
      completed: (answer as { threeDSCompInd: string }).threeDSCompInd === "Y",
      url: url ?? null,
    };
  }
  if (sdkAuthentication.safeParse(answer).success)
    return { kind: "fingerprint", completed: true, url: url ?? null };
  throw malformed("its body is no 3DS answer (a fingerprint, a fingerprint timeout or a challenge result)");
}

/**
 * The web library's fingerprint timeout sends its body as the 3DS method's form field,
 * `threeDSMethodData={"threeDS2FingerprintTimeout":true}`: the field's value, or undefined for any
 * other body.
 */
function methodData(body: string): string | undefined {
  if (!body.startsWith("threeDSMethodData=")) return undefined;
  const fields = new URLSearchParams(body);
  return fields.size === 1 ? (fields.get("threeDSMethodData") ?? undefined) : undefined;
}

function parseJson(text: string, why: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw malformed(why);
  }
}

/** The `gway_req_` the sandbox's browser fingerprint page gives back: bound to its own address. */
export function browserFingerprintAnswer(fingerprintUrl: string): string {
  const body = JSON.stringify({ threeDSCompInd: "Y" });
  return `${GATEWAY_REQUEST_PREFIX}${Buffer.from(JSON.stringify({ body, url: fingerprintUrl })).toString("base64")}`;
}
