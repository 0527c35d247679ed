import { httpUrl } from "../validation/fields.ts";
import * as z from "../validation/zod.ts";

/**
 * The `webhook_url` field's own rules, apart from where it may point (`url-policy.ts`, which resolves
 * hosts and judges addresses, and which a schema must not pull into every bundle that parses one).
 *
 * In every mode a webhook URL carries no credentials (`https://user:password@host/`): the password
 * would go to the receiver and show wherever the URL is shown (the project, the delivery log).
 */
export const CREDENTIALS_REFUSED = "must not contain a user name or password";

export function hasCredentials(url: URL): boolean {
  return url.username !== "" || url.password !== "";
}

/**
 * A `webhook_url` field (of a project, an invoice, a customer token): an absolute http(s) URL
 * without credentials; `""` → null. Where it may point is checked by `assertWebhookUrlAllowed`.
 */
export const webhookUrl = httpUrl.check(
  z.refine(
    (value) => {
      if (value === null || value === undefined || !URL.canParse(value)) return true;
      return !hasCredentials(new URL(value));
    },
    { message: CREDENTIALS_REFUSED },
  ),
);
