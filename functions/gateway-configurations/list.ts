import { pageOfConfigurations, readListFilter } from "../../shared/gateways/service.ts";
import { PUBLIC_KEY_ACCESS } from "../../shared/http/access.ts";
import { api } from "../../shared/http/api.ts";
import { readFlag } from "../../shared/http/flags.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";

/**
 * GET /gateway-configurations (`filter`, `with_disabled`, `expand_merchant_accounts`); the public key
 * too, which a payment page uses to offer the enabled ones.
 */
export const handler = api(
  async (request) => {
    const page = readPageRequest(request, "gatewayConfiguration", { ownFilter: true });
    const result = await pageOfConfigurations(request.caller, page, {
      filter: readListFilter(request.query.filter ?? request.body.filter),
      withDisabled: readFlag(request, "with_disabled"),
      expandGateway: readFlag(request, "expand_merchant_accounts"),
    });
    return pageReply("gateway_configurations", result, page);
  },
  { publicKey: PUBLIC_KEY_ACCESS.gatewayConfigurations },
);
