import { describe, expect, it } from "vitest";
import type { Caller } from "../../shared/http/auth.ts";
import { ApiError } from "../../shared/http/errors.ts";
import { newInvoice, presentInvoice, withChanges } from "../../shared/invoices/invoice.ts";
import {
  amountsNotInCurrency,
  createInvoiceInput,
  INVOICE_LIMITS,
  oversizedField,
  updateInvoiceInput,
} from "../../shared/invoices/schema.ts";
import { parseInput } from "../../shared/validation/parse.ts";

const minimal = { name: "Order 42", amount: "10.50", currency: "USD" };

function refusal(input: unknown, schema = createInvoiceInput): ApiError {
  try {
    parseInput(schema, input);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

const refusedFields = (input: unknown) => (refusal(input).invalidFields ?? []).map((field) => field.name);

const caller: Caller = {
  projectId: "test-proj_01JD0000000000000000000000",
  sandbox: true,
  environment: {
    id: "test-proj_01JD0000000000000000000000",
    root_project_id: "proj_01JD0000000000000000000000",
    name: "Unit",
    sandbox: true,
    key_hash: "",
    created_at: "2026-01-01T00:00:00.000Z",
  },
};

describe("invoice input", () => {
  it("needs a name, an amount and a currency, and names what is missing", () => {
    expect(refusal({}).errorType).toBe("request.validation.missing-name");
    expect(refusedFields({})).toEqual(["name", "amount", "currency"]);
    expect(refusal({ name: "x", currency: "USD" }).errorType).toBe("request.validation.missing-amount");
  });

  it("keeps amounts as sent and upper-cases the currency", () => {
    const fields = parseInput(createInvoiceInput, { ...minimal, currency: "usd" });
    expect(fields).toMatchObject({ amount: "10.50", currency: "USD" });
  });

  it("ignores keys it does not know and read-only fields sent back", () => {
    const fields = parseInput(createInvoiceInput, {
      ...minimal,
      id: "iv_x",
      sandbox: false,
      order_id: "A-1",
      billing: { address: "x" },
      details: [{ id: "ivd_x", name: "Book", amount: "10.50" }],
    });
    expect(fields).not.toHaveProperty("id");
    expect(fields).not.toHaveProperty("order_id");
    expect(fields.details?.[0]).not.toHaveProperty("id");
  });

  it("refuses a currency that is not ISO 4217", () => {
    expect(refusal({ ...minimal, currency: "ABC" }).errorType).toBe("request.validation.invalid-currency");
  });

  it.each([
    ["name", { name: "n".repeat(INVOICE_LIMITS.name + 1) }],
    ["amount", { amount: "-1" }],
    ["amount", { amount: "1e3" }],
    ["statement_descriptor", { statement_descriptor: "d".repeat(23) }],
    ["statement_descriptor", { statement_descriptor: "Shop & Co" }],
    ["statement_descriptor_url", { statement_descriptor_url: "example.com" }],
    ["return_url", { return_url: "ftp://example.com/" }],
    ["cancel_url", { cancel_url: "https:example.com" }],
    ["webhook_url", { webhook_url: "http://exa mple.com" }],
    ["merchant_initiator_type", { merchant_initiator_type: "always" }],
    ["sca_exemption_reason", { sca_exemption_reason: "high-value" }],
    ["challenge_indicator", { challenge_indicator: "maybe" }],
    ["payment_type", { payment_type: "cash" }],
    ["metadata.taxes_amount", { metadata: { taxes_amount: "-5" } }],
    ["metadata.shipping_amount", { metadata: { shipping_amount: "five" } }],
    ["metadata.k", { metadata: { k: "v".repeat(501) } }],
    ["gateway_data.k", { gateway_data: { k: 1 } }],
    ["external_fraud_tools", { external_fraud_tools: "forter" }],
    ["details", { details: "book" }],
    ["details[0].name", { details: [{ amount: "1" }] }],
    ["details[0].amount", { details: [{ name: "Book", amount: "-1" }] }],
    [
      "details[1].quantity",
      {
        details: [
          { name: "a", amount: "1" },
          { name: "b", amount: "1", quantity: 0 },
        ],
      },
    ],
    ["details[0].quantity", { details: [{ name: "a", amount: "1", quantity: "1.5" }] }],
    ["details[0].category", { details: [{ name: "a", amount: "1", category: "weapons" }] }],
    ["details[0].condition", { details: [{ name: "a", amount: "1", condition: "broken" }] }],
    ["details[0].type", { details: [{ name: "a", amount: "1", type: "t".repeat(31) }] }],
    ["details[0].reference", { details: [{ name: "a", amount: "1", reference: "r".repeat(256) }] }],
    ["details[0].description", { details: [{ name: "a", amount: "1", description: "d".repeat(256) }] }],
    ["details[0].brand", { details: [{ name: "a", amount: "1", brand: "b".repeat(81) }] }],
    ["details[0].model", { details: [{ name: "a", amount: "1", model: "m".repeat(81) }] }],
    ["details[0].discount_amount", { details: [{ name: "a", amount: "1", discount_amount: "-1" }] }],
    [
      "details[0].marketplace_merchant_created_at",
      { details: [{ name: "a", amount: "1", marketplace_merchant_created_at: "yesterday" }] },
    ],
    [
      "details[0].marketplace_merchant_is_business",
      { details: [{ name: "a", amount: "1", marketplace_merchant_is_business: "yes" }] },
    ],
    ["risk.score", { risk: { score: "s".repeat(13) } }],
    ["risk.is_legit", { risk: { is_legit: "maybe" } }],
    ["risk.skip_gateway_rules", { risk: { skip_gateway_rules: 2 } }],
    ["device.id", { device: { id: "d".repeat(101) } }],
    ["device.channel", { device: { channel: "tv" } }],
    ["device.ip_address", { device: { ip_address: "300.1.1.1" } }],
    ["device.ip_address", { device: { ip_address: "1" } }],
    ["device.ip_address", { device: { ip_address: "01.2.3.4" } }],
    ["device.ip_address", { device: { ip_address: "::ffff:01.2.3.4" } }],
    ["shipping.amount", { shipping: { amount: "-0.01" } }],
    ["shipping.method", { shipping: { method: "pigeon" } }],
    ["shipping.provider", { shipping: { provider: "p".repeat(33) } }],
    ["shipping.delay", { shipping: { delay: "slow" } }],
    ["shipping.address1", { shipping: { address1: "a".repeat(256) } }],
    ["shipping.address2", { shipping: { address2: "a".repeat(256) } }],
    ["shipping.state", { shipping: { state: "s".repeat(81) } }],
    ["shipping.city", { shipping: { city: "c".repeat(81) } }],
    ["shipping.country_code", { shipping: { country_code: "XX" } }],
    ["shipping.zip", { shipping: { zip: "z".repeat(17) } }],
    ["shipping.phone_number", { shipping: { phone_number: "+1234567890123456" } }],
    ["shipping.expects_shipping_at", { shipping: { expects_shipping_at: "2026-02-30" } }],
    ["shipping.relay_store_name", { shipping: { relay_store_name: "r".repeat(101) } }],
    ["tax.amount", { tax: { amount: "-1" } }],
    ["tax.rate", { tax: { rate: "100.5" } }],
    ["tax.rate", { tax: { rate: "-1" } }],
    ["customer_id", { customer_id: 42 }],
  ])("names %s when it breaks its rule", (name, change) => {
    expect(refusedFields({ ...minimal, ...change })).toEqual([name]);
  });

  it("bounds the number of details, also when a form body lists them by index", () => {
    const item = { name: "a", amount: "1" };
    const many = Array.from({ length: INVOICE_LIMITS.details + 1 }, () => item);
    expect(refusedFields({ ...minimal, details: many })).toEqual(["details"]);
    const byIndex = Object.fromEntries(many.map((detail, index) => [String(index), detail]));
    expect(refusedFields({ ...minimal, details: byIndex })).toEqual(["details"]);
    const two = parseInput(createInvoiceInput, {
      ...minimal,
      details: { "1": item, "0": { ...item, name: "b" } },
    });
    expect(two.details?.map((detail) => detail.name)).toEqual(["b", "a"]);
  });

  it("reads the form encoding's strings as booleans and integers", () => {
    const fields = parseInput(createInvoiceInput, {
      ...minimal,
      risk: { is_legit: "true", skip_gateway_rules: "false" },
      details: [{ name: "a", amount: "1", quantity: "3", marketplace_merchant_is_business: "1" }],
    });
    expect(fields.risk).toEqual({ is_legit: true, skip_gateway_rules: false });
    expect(fields.details?.[0]).toMatchObject({ quantity: 3, marketplace_merchant_is_business: true });
  });

  it("normalises dates to ISO 8601 UTC with milliseconds and a leading + of a phone to 00", () => {
    const fields = parseInput(createInvoiceInput, {
      ...minimal,
      shipping: {
        expects_shipping_at: "Sun, 22 Nov 2026 06:42:31 GMT",
        phone_number: "+33123456789",
        country_code: "fr",
      },
      details: [{ name: "a", amount: "1", marketplace_merchant_created_at: "2026-11-22T08:42:31+02:00" }],
    });
    expect(fields.shipping).toMatchObject({
      expects_shipping_at: "2026-11-22T06:42:31.000Z",
      phone_number: "0033123456789",
      country_code: "FR",
    });
    expect(fields.details?.[0]?.marketplace_merchant_created_at).toBe("2026-11-22T06:42:31.000Z");
  });

  it("accepts IPv4 and IPv6 addresses, absolute http(s) URLs and the descriptor's characters", () => {
    for (const ip_address of [
      "192.168.0.1",
      "::1",
      "2001:db8::8a2e:370:7334",
      "::ffff:1.2.3.4",
      "fe80::1%eth0",
    ]) {
      expect(() => parseInput(createInvoiceInput, { ...minimal, device: { ip_address } })).not.toThrow();
    }
    const fields = parseInput(createInvoiceInput, {
      ...minimal,
      return_url: "https://shop.example/return?order=42",
      webhook_url: "http://localhost:8080/hooks",
      statement_descriptor: "SHOP.EXAMPLE 12/34",
    });
    expect(fields.return_url).toBe("https://shop.example/return?order=42");
    expect(fields.statement_descriptor).toBe("SHOP.EXAMPLE 12/34");
  });

  it("accepts zero or positive numbers in the reserved metadata keys", () => {
    const fields = parseInput(createInvoiceInput, {
      ...minimal,
      metadata: { taxes_amount: "1.50", shipping_amount: "0" },
    });
    expect(fields.metadata).toEqual({ taxes_amount: "1.50", shipping_amount: "0" });
  });

  it("lets an update leave out the required fields but never clear them", () => {
    expect(parseInput(updateInvoiceInput, {})).toEqual({});
    expect(() => parseInput(updateInvoiceInput, { name: "" })).toThrowError(
      expect.objectContaining({ invalidFields: [expect.objectContaining({ name: "name" })] }),
    );
    expect(() => parseInput(updateInvoiceInput, { amount: "" })).toThrowError(
      expect.objectContaining({ invalidFields: [expect.objectContaining({ name: "amount" })] }),
    );
  });
});

describe("rules between fields", () => {
  const invoice = (input: Record<string, unknown>) =>
    newInvoice(caller, parseInput(createInvoiceInput, { ...minimal, ...input }), new Date());

  it("names every amount with more decimals than the currency allows", () => {
    const issues = amountsNotInCurrency(
      invoice({
        currency: "JPY",
        amount: "1000",
        details: [
          { name: "a", amount: "500" },
          { name: "b", amount: "499.5", discount_amount: "0.5" },
        ],
        shipping: { amount: "1.5" },
        tax: { amount: "10" },
      }),
    );
    expect(issues.map((issue) => issue.name)).toEqual([
      "details[1].amount",
      "details[1].discount_amount",
      "shipping.amount",
    ]);
  });

  it("finds nothing to say about amounts that fit", () => {
    expect(
      amountsNotInCurrency(invoice({ currency: "KWD", amount: "1.125", tax: { amount: "0.1" } })),
    ).toEqual([]);
  });

  it("names the largest field of an invoice too large to store", () => {
    const big = invoice({
      details: Array.from({ length: 100 }, (_, index) => ({
        name: `item ${index}`,
        amount: "1",
        metadata: Object.fromEntries(Array.from({ length: 50 }, (_, key) => [`key${key}`, "v".repeat(500)])),
      })),
    });
    expect(oversizedField(presentInvoice(big))?.name).toBe("details");
    expect(oversizedField(presentInvoice(invoice({})))).toBeUndefined();
  });
});

describe("a new invoice", () => {
  it("has the spec's defaults: empty dictionaries, shipping amount 0, channel web, every other field null", () => {
    const invoice = newInvoice(
      caller,
      parseInput(createInvoiceInput, minimal),
      new Date("2026-01-02T03:04:05Z"),
    );
    expect(invoice).toMatchObject({
      id: expect.stringMatching(/^iv_[0-9A-Z]{26}$/),
      project_id: caller.projectId,
      sandbox: true,
      metadata: {},
      gateway_data: {},
      external_fraud_tools: {},
      details: null,
      shipping: { amount: "0", city: null, country_code: null },
      device: { channel: "web", id: null, ip_address: null },
      risk: { score: null, is_legit: null, skip_gateway_rules: null },
      tax: { amount: null, rate: null },
      customer_id: null,
      token_id: null,
      transaction_id: null,
      require_backend_capture: false,
      incremental: false,
      created_at: "2026-01-02T03:04:05.000Z",
    });
  });

  it("gives each detail an id and a quantity of 1 unless told", () => {
    const invoice = newInvoice(
      caller,
      parseInput(createInvoiceInput, { ...minimal, details: [{ name: "a", amount: "1" }] }),
      new Date(),
    );
    expect(invoice.details?.[0]).toMatchObject({
      id: expect.stringMatching(/^ivd_/),
      quantity: 1,
      metadata: {},
      category: null,
    });
  });
});

describe("changing an invoice", () => {
  const original = newInvoice(
    caller,
    parseInput(createInvoiceInput, {
      ...minimal,
      shipping: { city: "Paris", zip: "75001", amount: "5" },
      device: { channel: "ios" },
      metadata: { a: "1" },
      details: [{ name: "a", amount: "1" }],
    }),
    new Date(),
  );
  const change = (input: Record<string, unknown>) =>
    withChanges(original, parseInput(updateInvoiceInput, input));

  it("changes only the fields sent, sub-object fields one by one", () => {
    const changed = change({ name: "Renamed", shipping: { city: "Lyon" } });
    expect(changed.name).toBe("Renamed");
    expect(changed.amount).toBe("10.50");
    expect(changed.shipping).toMatchObject({ city: "Lyon", zip: "75001", amount: "5" });
    expect(changed.device.channel).toBe("ios");
    expect(changed.details).toEqual(original.details);
  });

  it("clears a field sent empty and restores the defaults of cleared defaults", () => {
    const changed = change({ shipping: { zip: "", amount: "" }, device: { channel: "" } });
    expect(changed.shipping).toMatchObject({ city: "Paris", zip: null, amount: "0" });
    expect(changed.device.channel).toBe("web");
  });

  it("replaces a dictionary or the details sent as a whole", () => {
    const changed = change({ metadata: { b: "2" }, details: [{ name: "b", amount: "2" }] });
    expect(changed.metadata).toEqual({ b: "2" });
    expect(changed.details).toHaveLength(1);
    expect(changed.details?.[0]).toMatchObject({ name: "b", amount: "2" });
    expect(changed.details?.[0]?.id).not.toBe(original.details?.[0]?.id);
  });

  it("keeps what the service sets", () => {
    const changed = change({ name: "x" });
    expect(changed).toMatchObject({
      id: original.id,
      created_at: original.created_at,
      sandbox: true,
      transaction_id: null,
    });
  });
});
