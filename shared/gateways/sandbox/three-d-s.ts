import { createHash, createHmac } from "node:crypto";
import type { CustomerAction, Initiator, ThreeDSContext, ThreeDSRound, ThreeDSStatus } from "../connector.ts";
import type { TestCardBehaviour } from "./test-cards.ts";

/**
 * The sandbox's 3-D Secure, decided by the test card, the channel and the previous round's answer.
 * What the sandbox does, as a 3DS server with its directory server and issuer's ACS would:
 *
 * - which cards authenticate: `4000000000000101` asks for a challenge; `4000000000003055` and
 *   `…3063` authenticate frictionlessly; `…3220`'s fingerprint fails (declined
 *   `card.failed-three-d-s`); `…3253` needs strong authentication for customer-initiated payments
 *   only (a challenge from a browser or app, nothing for the merchant's server). Other cards: none.
 * - in a browser with 3DS1: the challenge page (`url`) at once; frictionless cards pass directly.
 * - in a browser with 3DS2 and in an app: a fingerprint round first (`fingerprint`, the hidden 3DS
 *   method page; `fingerprint-mobile`, the directory server's data for the SDK), then, for a
 *   challenge card, a challenge round (`url` in a browser, `challenge-mobile` in an app).
 * - a fingerprint that did not complete (the libraries' 10-second timeout): the 3DS server goes on
 *   without the device data, and the issuer then asks for a challenge (frictionless cards too), as
 *   ACSs commonly do when the 3DS method did not run; a failing fingerprint card still fails.
 * - the libraries' own test handler answers the fingerprint with empty values and an empty key: a
 *   completed fingerprint all the same.
 */
export type ThreeDSDecision =
  | { next: "approve"; status: Exclude<ThreeDSStatus, "failed"> }
  | { next: "decline" }
  | { next: "act"; round: ThreeDSRound; action: CustomerAction };

/** The answer that asks for the cardholder: the same for an authorization, an authentication and a verification. */
export const askCardholder = (decision: Extract<ThreeDSDecision, { next: "act" }>) =>
  ({
    status: "customer-action",
    customerAction: decision.action,
    round: decision.round,
    threeDS: "challenge-required",
  }) as const;

type Requirement = "none" | "frictionless" | "challenge" | "fingerprint-fails";

function requirementOf(behaviour: TestCardBehaviour, initiator: Initiator): Requirement {
  if (behaviour === "three-d-s-challenge") return "challenge";
  if (behaviour === "sca-customer-initiated") return initiator === "customer" ? "challenge" : "none";
  if (behaviour === "three-d-s-frictionless") return "frictionless";
  if (behaviour === "three-d-s-fingerprint-fails") return "fingerprint-fails";
  return "none";
}

export function decideThreeDS(
  behaviour: TestCardBehaviour,
  initiator: Initiator,
  scheme: string | null,
  context: ThreeDSContext,
): ThreeDSDecision {
  // Dropped: the authorization goes without authentication (no liability shift); required: a
  // customer-initiated payment authenticates whatever the card (a challenge).
  const own = context.demand === "dropped" ? "none" : requirementOf(behaviour, initiator);
  const requirement =
    own === "none" && context.demand === "required" && initiator === "customer" ? "challenge" : own;
  if (requirement === "none") return { next: "approve", status: "not-applicable" };
  // Authenticated before for this payment (3DS without paying): the issuer keeps that result.
  if (context.authenticated) return { next: "approve", status: context.authenticated.status };
  const answer = context.answer;
  if (answer?.kind === "challenge-page" || answer?.kind === "challenge") {
    return answer.approved ? { next: "approve", status: "challenge-passed" } : { next: "decline" };
  }
  if (answer?.kind === "fingerprint") {
    if (requirement === "fingerprint-fails") return { next: "decline" };
    if (requirement === "frictionless" && answer.completed)
      return { next: "approve", status: "frictionless" };
    return challengeRound(context);
  }
  if (context.channel === "browser") {
    if (requirement === "frictionless") return { next: "approve", status: "frictionless" };
    if (requirement === "fingerprint-fails") return { next: "decline" };
    return challengeRound(context);
  }
  return fingerprintRound(context, scheme);
}

function action(type: CustomerAction["type"], value: string): CustomerAction {
  return { type, value, metadata: {} };
}

function challengeRound(context: ThreeDSContext): ThreeDSDecision {
  if (context.channel === "app") {
    return { next: "act", round: "challenge", action: action("challenge-mobile", challengeData(context)) };
  }
  return { next: "act", round: "challenge-page", action: action("url", context.challengeUrl) };
}

function fingerprintRound(context: ThreeDSContext, scheme: string | null): ThreeDSDecision {
  if (context.channel === "app") {
    return {
      next: "act",
      round: "fingerprint",
      action: action("fingerprint-mobile", directoryServerData(context, scheme)),
    };
  }
  return { next: "act", round: "fingerprint", action: action("fingerprint", context.fingerprintUrl) };
}

/** The sandbox directory server's key and root certificate (self-signed, for the sandbox only). */
const SANDBOX_DS_PUBLIC_KEY = JSON.stringify({
  kty: "EC",
  crv: "P-256",
  x: "fJkZN7m21pILYSxjbk8YhpO2t8IvtiUGdBcqUQzMHUg",
  y: "7goqFRCqq3vloqIj3Wyqa7Gze3nYS11Y1D0ZWYGfwrI",
});
const SANDBOX_DS_ROOT_CA =
  "MIIB6TCCAY+gAwIBAgIUeE+Jw9TgX5xxPrsGrhDYvPpw8v4wCgYIKoZIzj0EAwIwSjEqMCgGA1UEAwwhU2FuZGJveCAzRFMgRGlyZWN0b3J5IFNlcnZlciBSb290MRwwGgYDVQQKDBNQYXltZW50IEFQSSBzYW5kYm94MB4XDTI2MTEyMzEzMjQ0NVoXDTQ2MTExODEzMjQ0NVowSjEqMCgGA1UEAwwhU2FuZGJveCAzRFMgRGlyZWN0b3J5IFNlcnZlciBSb290MRwwGgYDVQQKDBNQYXltZW50IEFQSSBzYW5kYm94MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEfJkZN7m21pILYSxjbk8YhpO2t8IvtiUGdBcqUQzMHUjuCioVEKqre+WioiPdbKprsbN7edhLXVjUPRlZgZ/CsqNTMFEwHQYDVR0OBBYEFM7Svb0/cUkg+UYQFU5GmI8GhMMoMB8GA1UdIwQYMBaAFM7Svb0/cUkg+UYQFU5GmI8GhMMoMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgCnUoxc+fe8TCdytEND41joFO0VujiMCxjyjRoSQMppMCIQD+nNsuJmvA4bvINMa+V8W7qjeOcvcXRVz5m5Jr8k8q8w==";

/** The directory servers' registered application provider ids, by scheme. */
const DIRECTORY_SERVER_IDS: Record<string, string> = {
  visa: "A000000003",
  mastercard: "A000000004",
  "american-express": "A000000025",
  jcb: "A000000065",
  discover: "A000000152",
};

export const THREE_DS_MESSAGE_VERSION = "2.2.0";

/** An id of the payment's 3DS exchange, stable for its transaction: a UUID as 3DS writes them. */
export function exchangeId(seed: string, role: string): string {
  const hex = createHash("sha256").update(`${role}:${seed}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const base64Json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

/** `fingerprint-mobile`: what the SDK needs to build its authentication request. */
function directoryServerData(context: ThreeDSContext, scheme: string | null): string {
  return base64Json({
    directoryServerID: DIRECTORY_SERVER_IDS[scheme ?? ""] ?? DIRECTORY_SERVER_IDS.visa,
    directoryServerPublicKey: SANDBOX_DS_PUBLIC_KEY,
    threeDSServerTransID: context.serverTransactionId,
    directoryServerRootCAs: [SANDBOX_DS_ROOT_CA],
    messageVersion: THREE_DS_MESSAGE_VERSION,
    ...(scheme ? { scheme } : {}),
  });
}

/** `challenge-mobile`: what the SDK needs to open the ACS's challenge. */
function challengeData(context: ThreeDSContext): string {
  const acsTransID = exchangeId(context.serverTransactionId, "acs");
  return base64Json({
    acsTransID,
    acsReferenceNumber: "SANDBOX-ACS-3DS2-REFERENCE",
    acsSignedContent: signedContent({ acsTransID, threeDSServerTransID: context.serverTransactionId }),
    threeDSServerTransID: context.serverTransactionId,
  });
}

/** A compact JWS, as ACSs sign their challenge parameters (the sandbox ACS signs with HS256). */
function signedContent(payload: Record<string, string>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const signingInput = `${part({ alg: "HS256", typ: "JOSE" })}.${part({ ...payload, acsURL: "https://acs.sandbox.invalid/challenge" })}`;
  const signature = createHmac("sha256", "payment-api-sandbox-acs").update(signingInput).digest("base64url");
  return `${signingInput}.${signature}`;
}
