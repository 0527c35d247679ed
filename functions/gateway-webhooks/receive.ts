import { api } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { receiveGatewayWebhook } from "../../shared/payments/gateway-webhooks.ts";

/** POST /gateway-webhooks/{gateway_configuration_id}: a provider's webhook, verified by its own signature. */
export const handler = api(
  async (request) =>
    ok(
      await receiveGatewayWebhook(request.path.gateway_configuration_id ?? "", {
        headers: request.headers,
        rawBody: request.rawBody(),
      }),
    ),
  { auth: "none" },
);
