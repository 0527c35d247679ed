import { randomBytes, timingSafeEqual } from "node:crypto";
import { config } from "../config.ts";

/**
 * An invoice's hosted checkout link (its `url`): `<checkout URL>/<environment id>/<invoice id>?key=<key>`.
 * The key is 192 random bits made with the invoice and kept on it, never shown but in this link, so
 * knowing an invoice's id (from an order e-mail, a log, a support ticket) is not enough to see or
 * pay it: the page answers its "not found" to a missing or wrong key as to an unknown invoice. The
 * environment id says in which environment's data the invoice is (it is the public key, which the
 * page uses anyway). The link lives as long as the invoice.
 */
export const CHECKOUT_KEY_PARAMETER = "key";

export function newCheckoutKey(): string {
  return randomBytes(24).toString("base64url");
}

/** The link of an invoice; one made before links had keys has none, and leads to "not found". */
export function checkoutLink(invoice: { id: string; project_id: string; checkout_key?: string }): string {
  const page = `${config.checkoutUrl}/${invoice.project_id}/${invoice.id}`;
  return invoice.checkout_key ? `${page}?${CHECKOUT_KEY_PARAMETER}=${invoice.checkout_key}` : page;
}

/** Whether `given` is the invoice's key, compared in constant time. */
export function checkoutKeyMatches(stored: string | undefined, given: unknown): boolean {
  if (stored === undefined || typeof given !== "string") return false;
  const expected = Buffer.from(stored);
  const received = Buffer.from(given);
  return expected.length === received.length && timingSafeEqual(expected, received);
}
