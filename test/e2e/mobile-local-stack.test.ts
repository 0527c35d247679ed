import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  actionValue,
  decodes,
  deviceOf,
  type MobileResponse,
  mobileClient,
  type Platform,
  testHandler,
} from "../support/mobile-libraries.ts";
import { api, type Client, type RunningStack, startStack } from "./harness.ts";

/**
 * Issue 14's walk on `npm start`, over HTTP, sending exactly what the Android and iOS libraries send
 * (their headers, bodies and `gway_req_` encoding, as their sandbox test handler produces it):
 * frictionless with a fingerprint; fingerprint then challenge approved; challenge refused;
 * fingerprint failing; a customer token verified through the same loop.
 */
let stack: RunningStack;
let merchant: Client;

beforeAll(async () => {
  stack = await startStack();
  merchant = api(stack.url, stack.credentials.sandbox);
});

afterAll(async () => {
  await stack?.stop();
});

const app = (platform: Platform) => mobileClient(stack.url, stack.credentials.sandbox.project_id, platform);

/** The library's loop: it runs every action it is given until an answer has none. */
async function authenticate(
  platform: Platform,
  send: (source: string) => Promise<MobileResponse>,
  first: string,
  approve: boolean,
): Promise<{ last: MobileResponse; actions: string[] }> {
  const actions: string[] = [];
  let response = await send(first);
  for (;;) {
    if (response.status !== 200) return { last: response, actions };
    const action = decodes.customerAction.parse(response.body.customer_action);
    if (!action) return { last: response, actions };
    actions.push(action.type);
    if (action.type === "fingerprint-mobile") {
      decodes.directoryServer.parse(actionValue(action.value));
      response = await send(testHandler.fingerprint());
    } else if (action.type === "challenge-mobile") {
      decodes.acsChallenge.parse(actionValue(action.value));
      response = await send(testHandler.challenge(platform, approve));
    } else {
      throw new Error(`A mobile payment got a ${action.type} action`);
    }
  }
}

async function pay(platform: Platform, number: string, approve = true) {
  const send = app(platform);
  const card = await send({
    method: "POST",
    path: "/cards",
    body: { number, exp_month: 12, exp_year: 2031, cvc: "123", metadata: {}, device: deviceOf(platform) },
  });
  decodes[platform].card.parse(card.body.card);
  const invoice = await merchant.post("/invoices", { name: "App order", amount: "18.50", currency: "GBP" });
  const invoiceId: string = invoice.body.invoice.id;
  const authorize = (source: string) =>
    send({
      method: "POST",
      path: `/invoices/${invoiceId}/authorize`,
      body: {
        source,
        incremental: false,
        enable_three_d_s_2: true,
        third_party_sdk_version: "2.2.0",
        device: deviceOf(platform),
      },
    });
  const result = await authenticate(platform, authorize, card.body.card.id, approve);
  const transaction = (await merchant.get(`/invoices/${invoiceId}/transactions`)).body.transaction;
  return { ...result, transaction };
}

describe("3DS2 from the mobile libraries on the local stack (npm start)", () => {
  it("authenticates frictionlessly after the fingerprint", async () => {
    const { last, actions, transaction } = await pay("android", "4000000000003063");
    expect(actions).toEqual(["fingerprint-mobile"]);
    expect(last.status).toBe(200);
    expect(last.body).toEqual({ success: true });
    expect(transaction).toMatchObject({
      status: "authorized",
      three_d_s_status: "frictionless",
      authorized_amount: "18.50",
    });
  });

  it("goes through the fingerprint and an approved challenge", async () => {
    const { last, actions, transaction } = await pay("ios", "4000000000000101");
    expect(actions).toEqual(["fingerprint-mobile", "challenge-mobile"]);
    expect(last.body).toEqual({ success: true });
    expect(transaction).toMatchObject({ status: "authorized", three_d_s_status: "challenge-passed" });
  });

  it("declines a refused challenge", async () => {
    const { last, actions, transaction } = await pay("android", "4000000000000101", false);
    expect(actions).toEqual(["fingerprint-mobile", "challenge-mobile"]);
    expect(last.status).toBe(410);
    decodes.ios.error.parse(last.body);
    expect(last.body.error_type).toBe("card.failed-three-d-s");
    expect(transaction).toMatchObject({ status: "failed", authorized_amount: "0.00" });
  });

  it("declines the card whose fingerprint fails", async () => {
    const { last, actions, transaction } = await pay("ios", "4000000000003220");
    expect(actions).toEqual(["fingerprint-mobile"]);
    expect(last.body.error_type).toBe("card.failed-three-d-s");
    expect(transaction.status).toBe("failed");
  });

  it("verifies a customer token through the same loop", async () => {
    const send = app("ios");
    const card = await send({
      method: "POST",
      path: "/cards",
      body: { number: "4000000000000101", exp_month: 12, exp_year: 2031, cvc: "123", metadata: {} },
    });
    const customer = await merchant.post("/customers", { first_name: "Ada" });
    const customerId: string = customer.body.customer.id;
    const token = await merchant.post(`/customers/${customerId}/tokens`, { verify: true });
    const tokenId: string = token.body.token.id;
    const assign = (source: string) =>
      send({
        method: "PUT",
        path: `/customers/${customerId}/tokens/${tokenId}`,
        body: { source, verify: true, enable_three_d_s_2: true, device: deviceOf("ios") },
      });
    const { last, actions } = await authenticate("ios", assign, card.body.card.id, true);
    expect(actions).toEqual(["fingerprint-mobile", "challenge-mobile"]);
    decodes.ios.token.parse(last.body.token);
    expect(last.body.token).toMatchObject({ verification_status: "success", card_id: card.body.card.id });

    const stored = await merchant.get(`/customers/${customerId}/tokens/${tokenId}`);
    expect(stored.body.token).toMatchObject({ is_chargeable: true, verification_status: "success" });
  });
});
