import { getConfiguration } from "../../shared/gateways/service.ts";
import { api } from "../../shared/http/api.ts";
import { readFlag } from "../../shared/http/flags.ts";
import { ok } from "../../shared/http/reply.ts";

/** GET /gateway-configurations/{gateway_configuration_id} */
export const handler = api(async (request) => {
  const gateway_configuration = await getConfiguration(
    request.caller,
    request.path.gateway_configuration_id ?? "",
    readFlag(request, "expand_merchant_accounts"),
  );
  return ok({ gateway_configuration });
});
