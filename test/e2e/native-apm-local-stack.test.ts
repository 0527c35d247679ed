import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_APM_SUCCESS_EMAIL } from "../../shared/gateways/sandbox/native-apm.ts";
import { type Receiver, startReceiver } from "../support/webhooks.ts";
import { api, type RunningStack, startStack } from "./harness.ts";

/**
 * Issue 10's walk, as a merchant makes it against `npm start` over HTTP: the native APM
 * configurations, the spec's whole flow, and the webhooks it sends. The stack has its own DynamoDB
 * Local (other stacks' stream pollers would race this one's on the shared one).
 */
let stack: RunningStack;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver("native-apm");
  stack = await startStack({ dynamodb: "own" });
});

afterAll(async () => {
  await stack?.stop();
  await receiver.close();
});

describe("native APM on the local stack (npm start)", () => {
  it("runs the spec's flow end to end and delivers its events", async () => {
    const sandbox = api(stack.url, stack.credentials.sandbox);
    await sandbox.put(`/projects/${stack.credentials.sandbox.project_id}`, { webhook_url: receiver.url });

    const listed = await sandbox.get(
      "/gateway-configurations?filter=native-alternative-payment-methods&expand_merchant_accounts=true",
    );
    expect(listed.status).toBe(200);
    const [configuration] = listed.body.gateway_configurations;
    expect(configuration.native_apm_config.parameters).toEqual([
      { key: "email", type: "email", length: null, required: true },
    ]);
    const source = `${configuration.id}.${configuration.gateway.name}`;
    expect(source).toMatch(/^gway_conf_[0-9A-Z]{26}\.sandbox$/);

    const invoice = await sandbox.post("/invoices", {
      name: "Native order",
      amount: "42.00",
      currency: "EUR",
      metadata: { skip_processoutjs: "true" },
    });
    const invoiceId = invoice.body.invoice.id;
    const path = `/invoices/${invoiceId}/native-payment`;
    const first = await sandbox.post(path, {
      gateway_configuration_id: source,
      native_apm: { parameter_values: { email: SANDBOX_APM_SUCCESS_EMAIL } },
    });
    expect(first.body.native_apm).toMatchObject({
      state: "CUSTOMER_INPUT",
      parameterDefinitions: [
        { key: "token", type: "numeric", required: true, length: 6 },
        { key: "name", type: "string", required: false, length: null },
      ],
    });
    const second = await sandbox.post(path, {
      gateway_configuration_id: source,
      native_apm: { parameter_values: { token: "246810" } },
    });
    expect(second.body.native_apm.state).toBe("PENDING_CAPTURE");
    expect(second.body.native_apm.parameterValues.message).toEqual(expect.any(String));

    const captured = await sandbox.post(`/invoices/${invoiceId}/capture`, { source });
    expect(captured.status).toBe(200);
    expect(captured.body.transaction.status).toBe("completed");

    // invoice.pending, then transaction.captured and invoice.completed, each fetched as the spec says.
    const delivered = await receiver.waitFor(3, 20_000);
    const names = await Promise.all(
      delivered.map(async (request) => {
        const { event_id } = JSON.parse(request.body);
        return (await sandbox.get(`/events/${event_id}`)).body.event.name;
      }),
    );
    expect(names.sort()).toEqual(["invoice.completed", "invoice.pending", "transaction.captured"]);
  });
});
