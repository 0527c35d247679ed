import { deleteConfiguration } from "../../shared/gateways/service.ts";
import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";

/** DELETE /gateway-configurations/{gateway_configuration_id} */
export const handler = api(async (request) => {
  await deleteConfiguration(request.caller, request.path.gateway_configuration_id ?? "");
  return ok({});
});
