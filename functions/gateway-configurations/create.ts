import { createConfiguration } from "../../shared/gateways/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** POST /gateways/{gateway_name}/gateway-configurations */
export const handler = api(async (request) => {
  const gateway_configuration = await createConfiguration(
    request.caller,
    request.path.gateway_name ?? "",
    request.body,
    (presented) => request.commitWith(ok({ gateway_configuration: presented })),
  );
  return ok({ gateway_configuration });
});
