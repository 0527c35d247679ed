import ipaddr from "ipaddr.js";
import { invalidField } from "../http/errors.ts";
import { addressRange, type ResolvedAddress, type Resolver, systemResolver } from "./addresses.ts";
import { webhookSettings } from "./settings.ts";
import { CREDENTIALS_REFUSED, hasCredentials } from "./url-field.ts";

/**
 * Where webhooks may go (SSRF protection). A webhook URL is checked when it is set and again at
 * each send, and a send connects only to the addresses that passed the check (see `http-post.ts`):
 *
 * - live: `https` only, and every address the host resolves to must be public;
 * - sandbox, deployed: `http` or `https`, every address public (a Lambda function reaches its
 *   runtime API on loopback, so a private target is never harmless);
 * - sandbox, local stack (`WEBHOOK_SANDBOX_PRIVATE_NETWORK=allow`): any address, so a receiver
 *   on the developer's machine works.
 *
 * Public means global unicast: not loopback, private (RFC 1918), link-local (169.254.0.0/16, which
 * holds the cloud metadata address 169.254.169.254, and fe80::/10), unique-local (fc00::/7),
 * carrier-grade NAT, multicast, broadcast, unspecified, documentation, benchmarking or reserved
 * ranges, nor an IPv6 address that embeds an IPv4 one (mapped addresses are judged as IPv4, NAT64,
 * 6to4 and Teredo are refused). IPv6 must be within 2000::/3.
 *
 * In every mode a webhook URL carries no credentials (`url-field.ts`, the field's own rules).
 */
export interface WebhookUrlPolicy {
  requireHttps: boolean;
  allowPrivateNetwork: boolean;
}

export function policyFor(environment: { sandbox: boolean }): WebhookUrlPolicy {
  if (!environment.sandbox) return { requireHttps: true, allowPrivateNetwork: false };
  return { requireHttps: false, allowPrivateNetwork: webhookSettings.sandboxMayUsePrivateNetwork };
}

export { addressRange, type ResolvedAddress, type Resolver, systemResolver };

export type UrlCheck =
  | { allowed: true; url: URL; addresses: ResolvedAddress[] }
  | { allowed: false; reason: string };

/** The URL's host without the brackets of an IPv6 literal. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** Checks a webhook URL against `policy`, resolving its host; the addresses returned are the checked ones. */
export async function checkWebhookUrl(
  raw: string,
  policy: WebhookUrlPolicy,
  resolve: Resolver = systemResolver,
): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { allowed: false, reason: "is not a valid URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { allowed: false, reason: "must be an http or https URL" };
  }
  if (policy.requireHttps && url.protocol !== "https:") {
    return { allowed: false, reason: "must be an https URL in live mode" };
  }
  if (hasCredentials(url)) return { allowed: false, reason: CREDENTIALS_REFUSED };
  const host = bareHost(url);
  let addresses: ResolvedAddress[];
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === "ipv6" ? 6 : 4 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return {
        allowed: false,
        reason: `has a host name that could not be resolved${code ? ` (${code})` : ""}`,
      };
    }
  }
  if (addresses.length === 0)
    return { allowed: false, reason: "has a host name that resolves to no address" };
  if (!policy.allowPrivateNetwork) {
    for (const { address } of addresses) {
      const range = addressRange(address);
      if (range !== "public") {
        return {
          allowed: false,
          reason: `must reach a public address: ${host} is ${address}, a ${range} address`,
        };
      }
    }
  }
  return { allowed: true, url, addresses };
}

/**
 * Refuses a webhook URL being set (`PUT /projects/{id}`, an invoice's `webhook_url`) that the
 * environment's policy would not send to: a 400 `request.validation.invalid-webhook-url`.
 */
export async function assertWebhookUrlAllowed(
  field: string,
  url: string,
  environment: { sandbox: boolean },
  resolve: Resolver = systemResolver,
): Promise<void> {
  const check = await checkWebhookUrl(url, policyFor(environment), resolve);
  if (!check.allowed) throw invalidField(field, check.reason, "invalid-webhook-url");
}

/**
 * The check the invoices service runs on an invoice's `webhook_url` when it is set: live invoices
 * only (sandbox URLs are checked at send time, so a sandbox invoice never waits on DNS).
 */
export async function checkInvoiceWebhookUrl(
  environment: { sandbox: boolean },
  url: string | null | undefined,
): Promise<void> {
  if (environment.sandbox || !url) return;
  await assertWebhookUrlAllowed("webhook_url", url, environment);
}
