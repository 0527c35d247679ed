import { pageOfConfigurations, readListFilter } from "../../shared/gateways/service.ts";
import { api } from "../../shared/http/api.ts";
import { readFlag } from "../../shared/http/flags.ts";
import { pageReply, readPageRequest } from "../../shared/http/listing.ts";

/** GET /gateways/{gateway_name}/gateway-configurations: the environment's configurations of one gateway. */
export const handler = api(async (request) => {
  const page = readPageRequest(request, "gatewayConfiguration", { ownFilter: true });
  const result = await pageOfConfigurations(request.caller, page, {
    gatewayName: request.path.gateway_name ?? "",
    filter: readListFilter(request.query.filter ?? request.body.filter),
    withDisabled: readFlag(request, "with_disabled"),
    expandGateway: readFlag(request, "expand_merchant_accounts"),
  });
  return pageReply("gateway_configurations", result, page);
});
