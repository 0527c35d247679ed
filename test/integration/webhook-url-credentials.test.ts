import { beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_PRIVATE_NETWORK_VARIABLE } from "../../shared/webhooks/settings.ts";
import { type ApiResponse, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Webhook URL credentials test");
const { sandbox } = local;

const WITH_PASSWORD = "http://user:s3cret@127.0.0.1:9000/hooks";

beforeAll(() => {
  // Loopback receivers are allowed, as in the local stack: only the credentials are wrong.
  process.env[SANDBOX_PRIVATE_NETWORK_VARIABLE] = "allow";
});

function expectRefusedWebhookUrl(answer: ApiResponse) {
  expect(answer.status).toBe(400);
  expect(answer.body).toMatchObject({
    success: false,
    error_type: "request.validation.invalid-webhook-url",
    invalid_fields: [{ name: "webhook_url", message: expect.stringContaining("user name or password") }],
  });
  expect(answer.text).not.toContain("s3cret");
}

describe("webhook URLs with credentials", () => {
  it("are refused as a project's webhook_url, which stays as it was", async () => {
    const id = local.project.sandbox.project_id;
    expectRefusedWebhookUrl(await sandbox.put(`/projects/${id}`, { webhook_url: WITH_PASSWORD }));
    expectRefusedWebhookUrl(
      await sandbox.put(`/projects/${id}`, `webhook_url=${encodeURIComponent("https://user@example.com/")}`, {
        form: true,
      }),
    );
    expect((await sandbox.get(`/projects/${id}`)).body.project.webhook_url).toBeNull();
  });

  it("are refused as an invoice's webhook_url, on create and on update", async () => {
    const fields = { name: "Order", amount: "10.00", currency: "USD" };
    expectRefusedWebhookUrl(await sandbox.post("/invoices", { ...fields, webhook_url: WITH_PASSWORD }));
    const created = await sandbox.post("/invoices", fields);
    expect(created.status).toBe(200);
    expectRefusedWebhookUrl(
      await sandbox.put(`/invoices/${created.body.invoice.id}`, { webhook_url: WITH_PASSWORD }),
    );
  });

  it("are refused as a customer token's webhook_url", async () => {
    const customer = await sandbox.post("/customers", {});
    expectRefusedWebhookUrl(
      await sandbox.post(`/customers/${customer.body.customer.id}/tokens`, {
        verify: true,
        webhook_url: WITH_PASSWORD,
      }),
    );
  });
});
