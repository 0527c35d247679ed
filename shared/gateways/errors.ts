import { ApiError } from "../http/errors.ts";
import type { Declined } from "./connector.ts";

/**
 * A decline as the API answers it: the issuer's `card.*` refusals with 410 (as the platform's client
 * libraries expect them), the gateway's own refusals (`gateway.declined`) with 400.
 */
export function declineError(outcome: Declined): ApiError {
  return new ApiError(outcome.errorType.startsWith("card.") ? 410 : 400, outcome.errorType, outcome.message);
}
