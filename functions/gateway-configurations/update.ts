import { updateConfiguration } from "../../shared/gateways/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** PUT /gateway-configurations/{gateway_configuration_id} */
export const handler = api(async (request) => {
  const gateway_configuration = await updateConfiguration(
    request.caller,
    request.path.gateway_configuration_id ?? "",
    request.body,
  );
  return ok({ gateway_configuration });
});
