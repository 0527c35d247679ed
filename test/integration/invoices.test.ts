import { request as httpRequest } from "node:http";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import fc from "fast-check";
import qs from "qs";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config.ts";
import { dynamo, dynamoCallCount } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { errorTypeName } from "../../shared/http/errors.ts";
import { newId } from "../../shared/ids.ts";
import {
  CHALLENGE_INDICATORS,
  DETAIL_CATEGORIES,
  DETAIL_CONDITIONS,
  DEVICE_CHANNELS,
  INVOICE_LIMITS,
  MERCHANT_INITIATOR_TYPES,
  PAYMENT_TYPES,
  SCA_EXEMPTION_REASONS,
  SHIPPING_DELAYS,
  SHIPPING_METHODS,
} from "../../shared/invoices/schema.ts";
import { findInvoice, updateInvoice } from "../../shared/invoices/store.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Invoices test");
const { sandbox, live } = local;

type Body = Record<string, unknown>;

const minimal = { name: "Order 42", amount: "10.50", currency: "USD" };
const totalCount = async (client: Client) =>
  (await client.get("/invoices?limit=1")).body.total_count as number;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function create(client: Client, body: Body = minimal) {
  const { status, body: answer } = await client.post("/invoices", body);
  expect(status, JSON.stringify(answer)).toBe(200);
  return answer.invoice;
}

/** A GET with a JSON body, as one client library sends `expand` (fetch cannot send a GET body). */
function getWithJsonBody(client: { project_id: string; private_key: string }, path: string, body: Body) {
  return new Promise<{ status: number; body: Body }>((done, fail) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(new URL(path, local.url), {
      method: "GET",
      headers: {
        authorization: `Basic ${Buffer.from(`${client.project_id}:${client.private_key}`).toString("base64")}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(payload),
      },
    });
    req.on("response", (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      response.on("end", () => done({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", fail);
    req.end(payload);
  });
}

/** Marks an invoice as paid the way the payments issue will: a transaction id on the invoice item. */
async function attachTransaction(scope: string, invoiceId: string, transactionId = newId("transaction")) {
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: keys.resource(scope, invoiceId),
      UpdateExpression: "SET transaction_id = :id",
      ExpressionAttributeValues: { ":id": transactionId },
    }),
  );
  return transactionId;
}

// ---- generators ---------------------------------------------------------------------------------

const CURRENCIES = [
  ["USD", 2],
  ["eur", 2],
  ["JPY", 0],
  ["KWD", 3],
  ["BHD", 3],
  ["krw", 0],
  ["GBP", 2],
] as const;

/** Non-empty printable text up to `max` characters, often exactly at the limit. */
const text = (max: number) =>
  fc.oneof(
    fc.string({ minLength: 1, maxLength: Math.min(max, 24) }),
    fc.string({ minLength: max, maxLength: max }),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: Math.floor(max / 4) }),
  );

const digitString = (length: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: length, maxLength: length });

/** An amount with at most `digits` decimals, trailing zeros kept ("10.50"). */
const amount = (digits: number) =>
  fc
    .tuple(
      fc.oneof(
        fc.constant(0n),
        fc.bigInt({ min: 0n, max: 9_999n }),
        fc.bigInt({ min: 0n, max: 999_999_999_999n }),
      ),
      fc.integer({ min: 0, max: digits }),
    )
    .chain(([integer, places]) =>
      places === 0
        ? fc.constant(String(integer))
        : digitString(places).map((fraction) => `${integer}.${fraction}`),
    );

/** What an invoice asks to be paid: an amount above zero (zero is refused, see "a zero amount"). */
const payableAmount = (digits: number) => amount(digits).filter((text) => /[1-9]/.test(text));

/** A date sent in ISO 8601 (UTC or with an offset) or RFC 1123. */
const dateSent = fc
  .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
  .chain((date) =>
    fc.constantFrom(
      date.toISOString(),
      date.toUTCString(),
      date.toISOString().replace(/\.\d{3}Z$/, "+00:00"),
      date.toISOString().slice(0, 10),
    ),
  );

const dictionaryKey = fc.stringMatching(/^[a-z][a-z0-9_]{0,19}$/);
const dictionary = (maxPairs: number, valueLength: number) =>
  fc.dictionary(dictionaryKey, text(valueLength), { maxKeys: maxPairs });

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

const detail = (digits: number) =>
  fc.record(
    {
      name: text(80),
      amount: amount(digits),
      type: text(30),
      quantity: fc.integer({ min: 1, max: 1000 }),
      metadata: dictionary(3, 500),
      category: fc.constantFrom(...DETAIL_CATEGORIES),
      reference: text(255),
      description: text(255),
      brand: text(80),
      model: text(80),
      discount_amount: amount(digits),
      condition: fc.constantFrom(...DETAIL_CONDITIONS),
      marketplace_merchant: text(255),
      marketplace_merchant_is_business: fc.boolean(),
      marketplace_merchant_created_at: dateSent,
    },
    { requiredKeys: ["name", "amount"] },
  );

const phoneNumber = fc.oneof(
  digitString(15).map((digits) => `+${digits}`),
  digitString(17),
  fc.integer({ min: 1, max: 12 }).chain((length) => digitString(length).map((digits) => `+${digits}`)),
);

const validInvoice = fc.constantFrom(...CURRENCIES).chain(([currency, digits]) =>
  fc.record(
    {
      name: text(80),
      amount: payableAmount(digits),
      currency: fc.constant(currency),
      details: fc.array(detail(digits), { maxLength: 4 }),
      risk: fc.record(
        { score: text(12), is_legit: fc.boolean(), skip_gateway_rules: fc.boolean() },
        { requiredKeys: [] },
      ),
      device: fc.record(
        {
          id: text(100),
          channel: fc.constantFrom(...DEVICE_CHANNELS),
          ip_address: fc.oneof(fc.ipV4(), fc.ipV6()),
        },
        { requiredKeys: [] },
      ),
      shipping: fc.record(
        {
          amount: amount(digits),
          method: fc.constantFrom(...SHIPPING_METHODS),
          provider: text(32),
          delay: fc.constantFrom(...SHIPPING_DELAYS),
          address1: text(255),
          address2: text(255),
          state: text(80),
          city: text(80),
          country_code: fc.constantFrom("FR", "us", "De", "JP", "br", "GB"),
          zip: text(16),
          phone_number: phoneNumber,
          expects_shipping_at: dateSent,
          relay_store_name: text(100),
        },
        { requiredKeys: [] },
      ),
      tax: fc.record(
        {
          amount: amount(digits),
          rate: fc.oneof(
            fc.integer({ min: 0, max: 100 }).map(String),
            fc.tuple(fc.integer({ min: 0, max: 99 }), digitString(2)).map(([a, b]) => `${a}.${b}`),
          ),
        },
        { requiredKeys: [] },
      ),
      metadata: fc
        .tuple(dictionary(6, 500), optional(amount(2)), optional(amount(3)))
        .map(([pairs, taxes, ship]) => ({
          ...pairs,
          ...(taxes !== undefined ? { taxes_amount: taxes } : {}),
          ...(ship !== undefined ? { shipping_amount: ship } : {}),
        })),
      gateway_data: dictionary(4, 100),
      external_fraud_tools: dictionary(3, 100),
      statement_descriptor: fc.stringMatching(/^[A-Za-z0-9 ./]{1,22}$/),
      statement_descriptor_phone: text(30),
      statement_descriptor_city: text(80),
      statement_descriptor_company: text(80),
      statement_descriptor_url: fc.webUrl(),
      merchant_initiator_type: fc.constantFrom(...MERCHANT_INITIATOR_TYPES),
      return_url: fc.webUrl({ withQueryParameters: true }),
      cancel_url: fc.webUrl(),
      webhook_url: fc.webUrl({ withFragments: true }),
      sca_exemption_reason: fc.constantFrom(...SCA_EXEMPTION_REASONS),
      challenge_indicator: fc.constantFrom(...CHALLENGE_INDICATORS),
      payment_type: fc.constantFrom(...PAYMENT_TYPES),
    },
    { requiredKeys: ["name", "amount", "currency"] },
  ),
);

type InvoiceSent = Body & { currency: string };

/** The three encodings clients use: JSON, form with brackets, form with dots. */
type Encoding = "json" | "form" | "form-dots";
const encodings = fc.constantFrom<Encoding>("json", "form", "form-dots");

/**
 * What the service answers for an invoice sent: defaults filled in, the few normalised fields
 * normalised. A form body cannot carry an empty list: `details: []` sent as a form is no details.
 */
function expectedInvoice(sent: InvoiceSent, encoding: Encoding = "json") {
  const get = (object: unknown, key: string) => (object as Body | undefined)?.[key] ?? null;
  const iso = (value: unknown) => (value == null ? null : new Date(String(value)).toISOString());
  const shipping = sent.shipping as Body | undefined;
  const phone = get(shipping, "phone_number") as string | null;
  const countryCode = get(shipping, "country_code") as string | null;
  return {
    name: sent.name,
    amount: sent.amount,
    currency: sent.currency.toUpperCase(),
    customer_id: null,
    token_id: null,
    transaction_id: null,
    subscription_id: null,
    details:
      sent.details === undefined || (encoding !== "json" && (sent.details as Body[]).length === 0)
        ? null
        : (sent.details as Body[]).map((item) => ({
            id: expect.stringMatching(/^ivd_/),
            name: item.name,
            type: get(item, "type"),
            amount: item.amount,
            quantity: item.quantity ?? 1,
            metadata: item.metadata ?? {},
            category: get(item, "category"),
            reference: get(item, "reference"),
            description: get(item, "description"),
            brand: get(item, "brand"),
            model: get(item, "model"),
            discount_amount: get(item, "discount_amount"),
            condition: get(item, "condition"),
            marketplace_merchant: get(item, "marketplace_merchant"),
            marketplace_merchant_is_business: get(item, "marketplace_merchant_is_business"),
            marketplace_merchant_created_at: iso(item.marketplace_merchant_created_at),
          })),
    risk: {
      score: get(sent.risk, "score"),
      is_legit: get(sent.risk, "is_legit"),
      skip_gateway_rules: get(sent.risk, "skip_gateway_rules"),
    },
    device: {
      id: get(sent.device, "id"),
      channel: get(sent.device, "channel") ?? "web",
      ip_address: get(sent.device, "ip_address"),
    },
    external_fraud_tools: sent.external_fraud_tools ?? {},
    shipping: {
      amount: get(shipping, "amount") ?? "0",
      method: get(shipping, "method"),
      provider: get(shipping, "provider"),
      delay: get(shipping, "delay"),
      address1: get(shipping, "address1"),
      address2: get(shipping, "address2"),
      state: get(shipping, "state"),
      city: get(shipping, "city"),
      country_code: countryCode?.toUpperCase() ?? null,
      zip: get(shipping, "zip"),
      phone_number: phone?.replace(/^\+/, "00") ?? null,
      expects_shipping_at: iso(get(shipping, "expects_shipping_at")),
      relay_store_name: get(shipping, "relay_store_name"),
    },
    tax: { amount: get(sent.tax, "amount"), rate: get(sent.tax, "rate") },
    statement_descriptor: sent.statement_descriptor ?? null,
    statement_descriptor_phone: sent.statement_descriptor_phone ?? null,
    statement_descriptor_city: sent.statement_descriptor_city ?? null,
    statement_descriptor_company: sent.statement_descriptor_company ?? null,
    statement_descriptor_url: sent.statement_descriptor_url ?? null,
    gateway_data: sent.gateway_data ?? {},
    metadata: sent.metadata ?? {},
    merchant_initiator_type: sent.merchant_initiator_type ?? null,
    return_url: sent.return_url ?? null,
    cancel_url: sent.cancel_url ?? null,
    webhook_url: sent.webhook_url ?? null,
    require_backend_capture: false,
    incremental: false,
    sca_exemption_reason: sent.sca_exemption_reason ?? null,
    challenge_indicator: sent.challenge_indicator ?? null,
    payment_type: sent.payment_type ?? null,
    exemption_reason_3ds2: null,
    card_verification: null,
  };
}

function send(client: Client, method: "post" | "put", path: string, body: Body, encoding: Encoding) {
  if (encoding === "json") return client[method](path, body);
  return client[method](path, qs.stringify(body, { allowDots: encoding === "form-dots" }), { form: true });
}

/** Keys client libraries send as null (spec-unknown ones and read-only ones). */
const NULL_KEYS_FROM_CLIENTS = {
  order_id: null,
  submerchant: null,
  initiation_type: null,
  payment_intent: null,
  billing: null,
  unsupported_feature_bypass: null,
  verification: null,
  expires_at: null,
  require_backend_capture: null,
  exemption_reason_3ds2: null,
  expand: null,
  limit: 0,
};

// ---- POST /invoices -----------------------------------------------------------------------------

describe("POST /invoices", () => {
  it("creates an invoice with the spec's defaults and read-only fields", async () => {
    const { status, body } = await sandbox.post("/invoices", minimal);
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    const invoice = body.invoice;
    expect(invoice).toEqual({
      id: expect.stringMatching(/^iv_[0-9A-Z]{26}$/),
      project_id: local.project.sandbox.project_id,
      // The hosted checkout page, with the link's own key (`shared/checkout/link.ts`).
      url: `${config.checkoutUrl}/${local.project.sandbox.project_id}/${invoice.id}?key=${invoice.url.split("key=")[1]}`,
      sandbox: true,
      created_at: expect.stringMatching(ISO_MS),
      ...expectedInvoice(minimal),
    });
    expect(invoice.url).toMatch(/\?key=[A-Za-z0-9_-]{32}$/);
    expect(invoice).not.toHaveProperty("checkout_key");
    expect(invoice.shipping.amount).toBe("0");
    expect(invoice.device.channel).toBe("web");
    expect(invoice.metadata).toEqual({});
    expect(invoice.gateway_data).toEqual({});
  });

  it("accepts the keys client libraries send as null, and read-only fields sent back", async () => {
    const { status, body } = await sandbox.post("/invoices", {
      ...minimal,
      ...NULL_KEYS_FROM_CLIENTS,
      id: "iv_forged",
      sandbox: false,
      project_id: "proj_other",
      transaction_id: "tr_forged",
      incremental: true,
    });
    expect(status).toBe(200);
    expect(body.invoice).toMatchObject({
      sandbox: true,
      project_id: local.project.sandbox.project_id,
      transaction_id: null,
      incremental: false,
    });
    expect(body.invoice.id).not.toBe("iv_forged");
  });

  it("round-trips every field exactly, in JSON and form encodings (property)", async () => {
    await fc.assert(
      fc.asyncProperty(validInvoice, encodings, async (sent, encoding) => {
        const posted = await send(sandbox, "post", "/invoices", sent, encoding);
        expect(posted.status, JSON.stringify(posted.body)).toBe(200);
        const expected = expectedInvoice(sent as InvoiceSent, encoding);
        expect(posted.body.invoice).toMatchObject(expected);
        const fetched = await sandbox.get(`/invoices/${posted.body.invoice.id}`);
        expect(fetched.status).toBe(200);
        expect(fetched.body.invoice).toEqual(posted.body.invoice);
      }),
      { numRuns: 40 },
    );
  });

  it("answers an idempotent retry with the first answer and stores the invoice once", async () => {
    const before = await totalCount(sandbox);
    const key = `invoice-${newId("invoice")}`;
    const first = await sandbox.post("/invoices", minimal, { idempotencyKey: key });
    const again = await sandbox.post("/invoices", minimal, { idempotencyKey: key });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await totalCount(sandbox)).toBe(before + 1);
    const other = await sandbox.post("/invoices", { ...minimal, amount: "11" }, { idempotencyKey: key });
    expect(other.body.error_type).toBe("request.idempotency-key.invalid");
  });
});

// ---- one rule broken at a time -----------------------------------------------------------------

/** Breaks one rule of a valid invoice; `name` is the field the answer must name. */
interface Breaker {
  name: string;
  jsonOnly?: boolean;
  apply(invoice: Body, digits: number): Body;
}

const long = (length: number) => "x".repeat(length);
const withDetail = (invoice: Body, change: Body): Body => {
  const details = [...((invoice.details as Body[] | undefined) ?? [])];
  details[0] = { ...(details[0] ?? { name: "item", amount: "1" }), ...change };
  return { ...invoice, details };
};
const withSub = (invoice: Body, sub: string, change: Body): Body => ({
  ...invoice,
  [sub]: { ...((invoice[sub] as Body | undefined) ?? {}), ...change },
});
const tooPrecise = (digits: number) => `1.${"5".repeat(digits + 1)}`;

const BREAKERS: Breaker[] = [
  { name: "name", apply: ({ name, ...invoice }) => invoice },
  { name: "name", apply: (invoice) => ({ ...invoice, name: long(81) }) },
  { name: "amount", apply: ({ amount, ...invoice }) => invoice },
  { name: "amount", apply: (invoice) => ({ ...invoice, amount: "-1" }) },
  { name: "amount", apply: (invoice) => ({ ...invoice, amount: "1e3" }) },
  { name: "amount", apply: (invoice, digits) => ({ ...invoice, amount: tooPrecise(digits) }) },
  { name: "amount", apply: (invoice) => ({ ...invoice, amount: "1000000000000" }) },
  { name: "currency", apply: ({ currency, ...invoice }) => invoice },
  { name: "currency", apply: (invoice) => ({ ...invoice, currency: "XYZ" }) },
  { name: "details", apply: (invoice) => ({ ...invoice, details: "many" }) },
  {
    name: "details",
    apply: (invoice) => ({
      ...invoice,
      details: Array.from({ length: INVOICE_LIMITS.details + 1 }, () => ({ name: "i", amount: "1" })),
    }),
  },
  { name: "details[0].name", apply: (invoice) => withDetail(invoice, { name: long(81) }) },
  { name: "details[0].amount", apply: (invoice) => withDetail(invoice, { amount: "-2" }) },
  {
    name: "details[0].amount",
    apply: (invoice, digits) => withDetail(invoice, { amount: tooPrecise(digits) }),
  },
  {
    name: "details[0].discount_amount",
    apply: (invoice, digits) => withDetail(invoice, { discount_amount: tooPrecise(digits) }),
  },
  { name: "details[0].quantity", apply: (invoice) => withDetail(invoice, { quantity: 0 }) },
  { name: "details[0].quantity", apply: (invoice) => withDetail(invoice, { quantity: "two" }) },
  { name: "details[0].category", apply: (invoice) => withDetail(invoice, { category: "weapons" }) },
  { name: "details[0].condition", apply: (invoice) => withDetail(invoice, { condition: "broken" }) },
  { name: "details[0].type", apply: (invoice) => withDetail(invoice, { type: long(31) }) },
  { name: "details[0].reference", apply: (invoice) => withDetail(invoice, { reference: long(256) }) },
  { name: "details[0].description", apply: (invoice) => withDetail(invoice, { description: long(256) }) },
  { name: "details[0].brand", apply: (invoice) => withDetail(invoice, { brand: long(81) }) },
  { name: "details[0].model", apply: (invoice) => withDetail(invoice, { model: long(81) }) },
  {
    name: "details[0].marketplace_merchant_created_at",
    apply: (invoice) => withDetail(invoice, { marketplace_merchant_created_at: "2026-02-30" }),
  },
  {
    name: "details[0].marketplace_merchant_is_business",
    apply: (invoice) => withDetail(invoice, { marketplace_merchant_is_business: "perhaps" }),
  },
  { name: "risk.score", apply: (invoice) => withSub(invoice, "risk", { score: long(13) }) },
  { name: "risk.is_legit", apply: (invoice) => withSub(invoice, "risk", { is_legit: "maybe" }) },
  {
    name: "risk.skip_gateway_rules",
    apply: (invoice) => withSub(invoice, "risk", { skip_gateway_rules: "no way" }),
  },
  { name: "device.id", apply: (invoice) => withSub(invoice, "device", { id: long(101) }) },
  { name: "device.channel", apply: (invoice) => withSub(invoice, "device", { channel: "tv" }) },
  { name: "device.ip_address", apply: (invoice) => withSub(invoice, "device", { ip_address: "256.0.0.1" }) },
  { name: "shipping.amount", apply: (invoice) => withSub(invoice, "shipping", { amount: "-0.5" }) },
  {
    name: "shipping.amount",
    apply: (invoice, digits) => withSub(invoice, "shipping", { amount: tooPrecise(digits) }),
  },
  { name: "shipping.method", apply: (invoice) => withSub(invoice, "shipping", { method: "pigeon" }) },
  { name: "shipping.provider", apply: (invoice) => withSub(invoice, "shipping", { provider: long(33) }) },
  { name: "shipping.delay", apply: (invoice) => withSub(invoice, "shipping", { delay: "slow" }) },
  { name: "shipping.address1", apply: (invoice) => withSub(invoice, "shipping", { address1: long(256) }) },
  { name: "shipping.address2", apply: (invoice) => withSub(invoice, "shipping", { address2: long(256) }) },
  { name: "shipping.state", apply: (invoice) => withSub(invoice, "shipping", { state: long(81) }) },
  { name: "shipping.city", apply: (invoice) => withSub(invoice, "shipping", { city: long(81) }) },
  { name: "shipping.country_code", apply: (invoice) => withSub(invoice, "shipping", { country_code: "XX" }) },
  { name: "shipping.zip", apply: (invoice) => withSub(invoice, "shipping", { zip: long(17) }) },
  {
    name: "shipping.phone_number",
    apply: (invoice) => withSub(invoice, "shipping", { phone_number: "+1234567890123456" }),
  },
  {
    name: "shipping.expects_shipping_at",
    apply: (invoice) => withSub(invoice, "shipping", { expects_shipping_at: "next tuesday" }),
  },
  {
    name: "shipping.relay_store_name",
    apply: (invoice) => withSub(invoice, "shipping", { relay_store_name: long(101) }),
  },
  { name: "tax.amount", apply: (invoice) => withSub(invoice, "tax", { amount: "-3" }) },
  { name: "tax.amount", apply: (invoice, digits) => withSub(invoice, "tax", { amount: tooPrecise(digits) }) },
  { name: "tax.rate", apply: (invoice) => withSub(invoice, "tax", { rate: "100.01" }) },
  {
    name: "metadata",
    apply: (invoice) => ({
      ...invoice,
      metadata: Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, "v"])),
    }),
  },
  { name: `metadata.${long(41)}`, apply: (invoice) => ({ ...invoice, metadata: { [long(41)]: "v" } }) },
  { name: "metadata.note", apply: (invoice) => ({ ...invoice, metadata: { note: long(501) } }) },
  { name: "metadata.taxes_amount", apply: (invoice) => ({ ...invoice, metadata: { taxes_amount: "-1" } }) },
  {
    name: "metadata.shipping_amount",
    apply: (invoice) => ({ ...invoice, metadata: { shipping_amount: "free" } }),
  },
  { name: "gateway_data.k", apply: (invoice) => ({ ...invoice, gateway_data: { k: long(2001) } }) },
  // A JSON number is read as its text, like a form value (`"k": 5` is the string "5"); a boolean is not.
  { name: "gateway_data.k", jsonOnly: true, apply: (invoice) => ({ ...invoice, gateway_data: { k: true } }) },
  {
    name: "external_fraud_tools.forter",
    apply: (invoice) => ({ ...invoice, external_fraud_tools: { forter: long(2001) } }),
  },
  { name: "statement_descriptor", apply: (invoice) => ({ ...invoice, statement_descriptor: long(23) }) },
  { name: "statement_descriptor", apply: (invoice) => ({ ...invoice, statement_descriptor: "Shop & Co" }) },
  {
    name: "statement_descriptor_url",
    apply: (invoice) => ({ ...invoice, statement_descriptor_url: "shop" }),
  },
  { name: "return_url", apply: (invoice) => ({ ...invoice, return_url: "javascript:alert(1)" }) },
  { name: "cancel_url", apply: (invoice) => ({ ...invoice, cancel_url: "//shop.example/cancel" }) },
  { name: "webhook_url", apply: (invoice) => ({ ...invoice, webhook_url: "ftp://shop.example/hook" }) },
  {
    name: "merchant_initiator_type",
    apply: (invoice) => ({ ...invoice, merchant_initiator_type: "sometimes" }),
  },
  { name: "sca_exemption_reason", apply: (invoice) => ({ ...invoice, sca_exemption_reason: "vip" }) },
  { name: "challenge_indicator", apply: (invoice) => ({ ...invoice, challenge_indicator: "please" }) },
  { name: "payment_type", apply: (invoice) => ({ ...invoice, payment_type: "cash" }) },
  { name: "token_id", apply: (invoice) => ({ ...invoice, token_id: newId("token") }) },
];

describe("invalid invoices", () => {
  it("answer 400 naming the one broken field, and write nothing (property)", async () => {
    const client = api(local.url, (await createProject("Invalid invoices")).sandbox);
    const before = await totalCount(client);
    const invalid = fc
      .tuple(validInvoice, fc.constantFrom(...BREAKERS), encodings)
      .filter(([, breaker, encoding]) => !breaker.jsonOnly || encoding === "json");
    await fc.assert(
      fc.asyncProperty(invalid, async ([valid, breaker, encoding]) => {
        const digits = CURRENCIES.find(([code]) => code === valid.currency)?.[1] ?? 2;
        const { status, body } = await send(
          client,
          "post",
          "/invoices",
          breaker.apply(valid, digits),
          encoding,
        );
        expect(status, JSON.stringify(body)).toBe(400);
        expect(body.success).toBe(false);
        expect(body.error_type).toMatch(/^request\.validation\./);
        const names = (body.invalid_fields as { name: string }[]).map((field) => field.name);
        expect(names.length).toBeGreaterThan(0);
        expect(new Set(names), JSON.stringify(body)).toEqual(new Set([breaker.name]));
        const named = breaker.name.replace(/^(metadata|gateway_data|external_fraud_tools)\..*$/, "$1");
        expect(body.error_type).toMatch(
          new RegExp(`^request\\.validation\\.(invalid|missing)-${errorTypeName(named)}$`),
        );
      }),
      { numRuns: 120 },
    );
    // Every rule, once at least, whatever the random draws.
    for (const breaker of BREAKERS) {
      const { status, body } = await client.post(
        "/invoices",
        breaker.apply({ ...minimal, currency: "JPY", amount: "1" }, 0),
      );
      expect(status, breaker.name).toBe(400);
      expect(body.invalid_fields.map((field: { name: string }) => field.name)).toContain(breaker.name);
    }
    expect(await totalCount(client)).toBe(before);
  });

  it("never answers 500, whatever the body (property)", async () => {
    const junkJson = fc.oneof(
      fc.jsonValue(),
      fc.constantFrom(
        { __proto__: null, name: "\ud800", amount: "1", currency: "USD" },
        JSON.parse('{"__proto__": {"name": "x"}, "amount": "1", "currency": "USD"}'),
        { name: "x", amount: "1", currency: "USD", details: [null, 1, "x", []] },
        { name: "x", amount: 1e300, currency: "USD", tax: { rate: -0 } },
      ),
      fc.dictionary(
        fc.constantFrom(
          "name",
          "amount",
          "currency",
          "details",
          "shipping",
          "metadata",
          "device",
          "tax",
          "risk",
          "customer_id",
          "token_id",
        ),
        fc.jsonValue(),
      ),
      validInvoice.chain((valid) =>
        fc
          .tuple(fc.constantFrom(...Object.keys(valid)), fc.jsonValue())
          .map(([key, value]) => ({ ...valid, [key]: value })),
      ),
    );
    const junkForm = fc.oneof(
      fc.string(),
      fc
        .array(fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })))
        .map((pairs) =>
          pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join("&"),
        ),
      fc.constantFrom(
        "details[0]=x",
        "details[][name]=a",
        "metadata=1",
        "metadata[0]=x",
        "shipping=x&shipping[city]=y",
        "a[b][c][d][e][f][g][h][i][j]=1",
        "__proto__[name]=x&amount=1&currency=USD",
        "name=%ED%A0%80&amount=1&currency=USD",
      ),
    );
    const created = await create(sandbox);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          junkJson.map((body) => ({ body: JSON.stringify(body), contentType: "application/json" })),
          junkForm.map((body) => ({ body, contentType: "application/x-www-form-urlencoded" })),
        ),
        fc.constantFrom("post", "put"),
        async ({ body, contentType }, method) => {
          const path = method === "post" ? "/invoices" : `/invoices/${created.id}`;
          const answer = await sandbox[method](path, body, { contentType });
          expect(answer.status, answer.text).toBeLessThan(500);
          expect(answer.body.success, answer.text).toBe(answer.status === 200);
        },
      ),
      { numRuns: 80 },
    );
  });
});

// ---- links --------------------------------------------------------------------------------------

describe("customer and token links", () => {
  it("links an existing customer of the same environment", async () => {
    const customer = (await sandbox.post("/customers", { first_name: "Ada" })).body.customer;
    const invoice = await create(sandbox, { ...minimal, customer_id: customer.id });
    expect(invoice.customer_id).toBe(customer.id);
  });

  it("refuses an unknown customer with a 404 naming it, and writes nothing", async () => {
    const before = await totalCount(sandbox);
    const unknown = newId("customer");
    for (const customerId of [unknown, "not-a-customer-id"]) {
      const { status, body } = await sandbox.post("/invoices", { ...minimal, customer_id: customerId });
      expect(status).toBe(404);
      expect(body.error_type).toBe("resource.customer.not-found");
      expect(body.message).toContain(customerId);
    }
    expect(await totalCount(sandbox)).toBe(before);
  });

  it("refuses a customer of the other environment or of another project", async () => {
    const liveCustomer = (await live.post("/customers", {})).body.customer;
    const otherCustomer = (
      await api(local.url, (await createProject("Other")).sandbox).post("/customers", {})
    ).body.customer;
    for (const customerId of [liveCustomer.id, otherCustomer.id]) {
      const { status, body } = await sandbox.post("/invoices", { ...minimal, customer_id: customerId });
      expect(status).toBe(404);
      expect(body.error_type).toBe("resource.customer.not-found");
    }
  });

  it("refuses a token_id without a customer_id, naming token_id", async () => {
    const { status, body } = await sandbox.post("/invoices", { ...minimal, token_id: newId("token") });
    expect(status).toBe(400);
    expect(body.invalid_fields).toEqual([expect.objectContaining({ name: "token_id" })]);
  });

  it("refuses a token the customer does not have with a 404, and writes nothing", async () => {
    const customer = (await sandbox.post("/customers", {})).body.customer;
    const before = await totalCount(sandbox);
    const tokenId = newId("token");
    const { status, body } = await sandbox.post("/invoices", {
      ...minimal,
      customer_id: customer.id,
      token_id: tokenId,
    });
    expect(status).toBe(404);
    expect(body.error_type).toBe("resource.token.not-found");
    expect(body.message).toContain(tokenId);
    expect(await totalCount(sandbox)).toBe(before);
  });

  it("accepts a token of the customer and expands it as the tokens module presents it", async () => {
    const customer = (await sandbox.post("/customers", {})).body.customer;
    const other = (await sandbox.post("/customers", {})).body.customer;
    const card = (
      await sandbox.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc2: "123" })
    ).body.card;
    const tokenId = (await sandbox.post(`/customers/${customer.id}/tokens`, { source: card.id })).body.token
      .id;
    const token = (await sandbox.get(`/customers/${customer.id}/tokens/${tokenId}`)).body.token;
    expect(token).toMatchObject({ id: tokenId, customer_id: customer.id, card: card, is_default: true });

    const refused = await sandbox.post("/invoices", { ...minimal, customer_id: other.id, token_id: tokenId });
    expect(refused.status).toBe(404);

    const invoice = await create(sandbox, { ...minimal, customer_id: customer.id, token_id: tokenId });
    expect(invoice.token_id).toBe(tokenId);
    const alone = await sandbox.get(`/invoices/${invoice.id}?expand=token`);
    expect(alone.body.invoice.token).toEqual(token);
    const withCustomer = await sandbox.get(`/invoices/${invoice.id}?expand=token,customer.tokens`);
    expect(withCustomer.body.invoice.token).toEqual(token);
    expect(withCustomer.body.invoice.customer).toMatchObject({ default_token_id: tokenId, tokens: [token] });
  });
});

// ---- isolation ----------------------------------------------------------------------------------

describe("isolation", () => {
  it("makes an invoice a 404 to the other environment and to another project", async () => {
    const other = api(local.url, (await createProject("Other")).live);
    const invoice = await create(sandbox);
    for (const client of [live, other]) {
      expect((await client.get(`/invoices/${invoice.id}`)).body.error_type).toBe(
        "resource.invoice.not-found",
      );
      expect((await client.put(`/invoices/${invoice.id}`, { name: "x" })).status).toBe(404);
      expect((await client.del(`/invoices/${invoice.id}`)).status).toBe(404);
      const listed = (await client.get("/invoices?limit=100")).body.invoices.map(
        (item: { id: string }) => item.id,
      );
      expect(listed).not.toContain(invoice.id);
    }
    expect((await sandbox.get(`/invoices/${invoice.id}`)).body.invoice.name).toBe(minimal.name);
  });

  it("marks live invoices as not sandbox", async () => {
    expect((await create(live)).sandbox).toBe(false);
  });

  it("answers an id that is not an invoice id with a 404", async () => {
    for (const id of ["nope", newId("customer"), newId("invoice")]) {
      const { status, body } = await sandbox.get(`/invoices/${id}`);
      expect(status).toBe(404);
      expect(body.error_type).toBe("resource.invoice.not-found");
    }
  });
});

// ---- expand -------------------------------------------------------------------------------------

describe("expand", () => {
  it("expands customer, customer.tokens, project, transaction and token in the four request shapes", async () => {
    const customer = (await sandbox.post("/customers", { first_name: "Ada" })).body.customer;
    const invoice = await create(sandbox, { ...minimal, customer_id: customer.id });
    const all = ["customer", "customer.tokens", "project", "transaction", "token"];
    const answers = await Promise.all([
      sandbox.get(`/invoices/${invoice.id}?${all.map((path) => `expand[]=${path}`).join("&")}`),
      sandbox.get(`/invoices/${invoice.id}?${all.map((path) => `expand=${path}`).join("&")}`),
      sandbox.get(`/invoices/${invoice.id}?expand=${all.join(",")}`),
      getWithJsonBody(local.project.sandbox, `/invoices/${invoice.id}`, { expand: all }),
    ]);
    for (const { status, body } of answers) {
      expect(status).toBe(200);
      expect(body.invoice).toEqual({
        ...invoice,
        customer: { ...customer, tokens: [] },
        project: {
          id: local.project.sandbox.project_id,
          name: "Invoices test",
          sandbox: true,
          created_at: expect.any(String),
        },
        transaction: null,
        token: null,
      });
    }
  });

  it("gives null for a link that is not set, and keeps the _id fields", async () => {
    const invoice = await create(sandbox);
    const { body } = await sandbox.get(`/invoices/${invoice.id}?expand=customer,token,transaction`);
    expect(body.invoice).toMatchObject({
      customer_id: null,
      customer: null,
      token_id: null,
      token: null,
      transaction_id: null,
      transaction: null,
    });
  });

  it("expands a customer without tokens unless customer.tokens is asked", async () => {
    const customer = (await sandbox.post("/customers", {})).body.customer;
    const invoice = await create(sandbox, { ...minimal, customer_id: customer.id });
    const { body } = await sandbox.get(`/invoices/${invoice.id}?expand[]=customer`);
    expect(body.invoice.customer).toEqual(customer);
    expect(body.invoice).not.toHaveProperty("project");
  });

  it("expands the transaction of a paid invoice as GET /transactions/{id} shows it", async () => {
    const invoice = await create(sandbox);
    const card = (
      await sandbox.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc2: "123" })
    ).body.card;
    const paid = await sandbox.post(`/invoices/${invoice.id}/authorize`, { source: card.id });
    const transactionId = paid.body.transaction.id;
    const { body } = await sandbox.get(`/invoices/${invoice.id}?expand=transaction`);
    expect(body.invoice.transaction_id).toBe(transactionId);
    expect(body.invoice.transaction).toEqual(
      (await sandbox.get(`/transactions/${transactionId}`)).body.transaction,
    );
  });

  it("refuses a field that cannot be expanded", async () => {
    const invoice = await create(sandbox);
    const { status, body } = await sandbox.get(`/invoices/${invoice.id}?expand=secrets`);
    expect(status).toBe(400);
    expect(body.invalid_fields).toEqual([expect.objectContaining({ name: "expand" })]);
  });

  it("expands every invoice of a page, reading a shared customer once per page", async () => {
    const client = api(local.url, (await createProject("Expand list")).sandbox);
    const customer = (await client.post("/customers", { first_name: "Shared" })).body.customer;
    for (let i = 0; i < 3; i++) await create(client, { ...minimal, customer_id: customer.id });
    await create(client);
    const calls = dynamoCallCount();
    const { status, body } = await client.get("/invoices?expand[]=customer&expand[]=project");
    expect(status).toBe(200);
    // The count (a BatchGet of its shards, and a query of the layout before them), the page (a query
    // of each of the 8 listing shards of invoices and of the one partition before them, sent
    // together), and the customer once (the project comes with the caller).
    expect(dynamoCallCount() - calls).toBe(2 + 9 + 1);
    expect(body.invoices.map((invoice: { customer: unknown }) => invoice.customer)).toEqual([
      null,
      customer,
      customer,
      customer,
    ]);
    for (const invoice of body.invoices) expect(invoice.project.id).toBe(invoice.project_id);
  });
});

// ---- listing ------------------------------------------------------------------------------------

describe("GET /invoices", () => {
  it("pages with the spec's listing rules and cursors", async () => {
    const client = api(local.url, (await createProject("Invoice listing")).sandbox);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(client, { ...minimal, name: `n${i}` })).id);
    const page = async (query: string) => (await client.get(`/invoices?${query}`)).body;

    const first = await page("limit=2");
    expect(first).toMatchObject({
      success: true,
      count: 2,
      has_more: true,
      total_count: 5,
      limit: 2,
      order: "desc",
    });
    expect(first.invoices.map((invoice: { id: string }) => invoice.id)).toEqual([ids[4], ids[3]]);
    const next = await page(`limit=2&start_after=${ids[3]}`);
    expect(next.invoices.map((invoice: { id: string }) => invoice.id)).toEqual([ids[2], ids[1]]);
    const last = await page(`limit=2&start_after=${ids[1]}`);
    expect(last).toMatchObject({ count: 1, has_more: false });

    const ascending = await page("order=asc&limit=10");
    expect(ascending.invoices.map((invoice: { id: string }) => invoice.id)).toEqual(ids);
    expect(ascending.has_more).toBe(false);
    const before = await page(`order=asc&limit=2&end_before=${ids[3]}`);
    expect(before.invoices.map((invoice: { id: string }) => invoice.id)).toEqual([ids[1], ids[2]]);
    expect(before.has_more).toBe(true);

    const defaults = await page("limit=0&start_after=&end_before=&filter=");
    expect(defaults).toMatchObject({ limit: 10, count: 5 });
    expect((await client.get(`/invoices?start_after=${ids[0]}&end_before=${ids[1]}`)).status).toBe(400);
    expect((await client.get("/invoices?start_after=cust_x")).status).toBe(400);
  });
});

// ---- PUT and DELETE -----------------------------------------------------------------------------

describe("PUT /invoices/{id}", () => {
  it("changes only the fields sent, in JSON or form encoding", async () => {
    const invoice = await create(sandbox, {
      ...minimal,
      shipping: { city: "Paris", zip: "75001" },
      metadata: { a: "1" },
      details: [{ name: "Book", amount: "10.50" }],
    });
    const json = await sandbox.put(`/invoices/${invoice.id}`, {
      name: "Renamed",
      shipping: { city: "Lyon" },
    });
    expect(json.status).toBe(200);
    expect(json.body.invoice).toEqual({
      ...invoice,
      name: "Renamed",
      shipping: { ...invoice.shipping, city: "Lyon" },
    });
    const form = await sandbox.put(
      `/invoices/${invoice.id}`,
      "shipping[zip]=&device.channel=ios&amount=12.00",
      {
        form: true,
      },
    );
    expect(form.body.invoice).toMatchObject({
      amount: "12.00",
      shipping: { city: "Lyon", zip: null },
      device: { channel: "ios" },
      details: invoice.details,
    });
    expect((await sandbox.get(`/invoices/${invoice.id}`)).body.invoice).toEqual(form.body.invoice);
  });

  it("checks a new currency against every amount, naming currency when the amount was not sent", async () => {
    const invoice = await create(sandbox, {
      ...minimal,
      amount: "10",
      details: [{ name: "a", amount: "2.50" }],
    });
    const refused = await sandbox.put(`/invoices/${invoice.id}`, { currency: "JPY" });
    expect(refused.status).toBe(400);
    expect(refused.body.error_type).toBe("request.validation.invalid-currency");
    expect(refused.body.invalid_fields).toEqual([expect.objectContaining({ name: "currency" })]);

    const amount = await sandbox.put(`/invoices/${invoice.id}`, {
      amount: "10.5",
      currency: "JPY",
      details: [],
    });
    expect(amount.body.invalid_fields).toEqual([expect.objectContaining({ name: "amount" })]);

    const accepted = await sandbox.put(`/invoices/${invoice.id}`, {
      currency: "jpy",
      details: [{ name: "a", amount: "250" }],
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.invoice).toMatchObject({
      currency: "JPY",
      amount: "10",
      details: [{ amount: "250" }],
    });
    expect((await sandbox.put(`/invoices/${invoice.id}`, { amount: "1.5" })).status).toBe(400);
  });

  it("validates the fields sent with the creation rules", async () => {
    const invoice = await create(sandbox);
    for (const [body, name] of [
      [{ name: "" }, "name"],
      [{ shipping: { country_code: "XX" } }, "shipping.country_code"],
      [{ device: { ip_address: "::g" } }, "device.ip_address"],
      [{ customer_id: "", token_id: newId("token") }, "token_id"],
    ] as const) {
      const { status, body: answer } = await sandbox.put(`/invoices/${invoice.id}`, body);
      expect(status).toBe(400);
      expect(answer.invalid_fields).toEqual([expect.objectContaining({ name })]);
    }
    expect((await sandbox.get(`/invoices/${invoice.id}`)).body.invoice).toEqual(invoice);
  });

  it("links and unlinks a customer, checking it exists", async () => {
    const invoice = await create(sandbox);
    const customer = (await sandbox.post("/customers", {})).body.customer;
    const missing = await sandbox.put(`/invoices/${invoice.id}`, { customer_id: newId("customer") });
    expect(missing.body.error_type).toBe("resource.customer.not-found");
    const linked = await sandbox.put(`/invoices/${invoice.id}`, { customer_id: customer.id });
    expect(linked.body.invoice.customer_id).toBe(customer.id);
    const token = await sandbox.put(`/invoices/${invoice.id}`, { token_id: newId("token") });
    expect(token.body.error_type).toBe("resource.token.not-found");
    const unlinked = await sandbox.put(`/invoices/${invoice.id}`, "customer_id=", { form: true });
    expect(unlinked.body.invoice.customer_id).toBeNull();
  });

  it("refuses every change once a payment was attempted, with a 409", async () => {
    const invoice = await create(sandbox);
    await attachTransaction(local.project.sandbox.project_id, invoice.id);
    const { status, body } = await sandbox.put(`/invoices/${invoice.id}`, { name: "Too late" });
    expect(status).toBe(409);
    expect(body.error_type).toBe("request.invoice.payment-attempted");
    expect((await sandbox.get(`/invoices/${invoice.id}`)).body.invoice.name).toBe(minimal.name);
  });

  it("applies concurrent updates one after the other, none lost", async () => {
    const invoice = await create(sandbox);
    const answers = await Promise.all([
      sandbox.put(`/invoices/${invoice.id}`, { metadata: { a: "1" } }),
      sandbox.put(`/invoices/${invoice.id}`, { name: "Renamed" }),
    ]);
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    const final = (await sandbox.get(`/invoices/${invoice.id}`)).body.invoice;
    if (answers.every((answer) => answer.status === 200)) {
      expect(final).toMatchObject({ metadata: { a: "1" }, name: "Renamed" });
    }
  });

  it("answers an unknown invoice with a 404", async () => {
    const { status, body } = await sandbox.put(`/invoices/${newId("invoice")}`, { name: "x" });
    expect(status).toBe(404);
    expect(body.error_type).toBe("resource.invoice.not-found");
  });
});

describe("DELETE /invoices/{id}", () => {
  it("deletes an unpaid invoice once and counts it out", async () => {
    const invoice = await create(sandbox);
    const before = await totalCount(sandbox);
    const deleted = await sandbox.del(`/invoices/${invoice.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect(await totalCount(sandbox)).toBe(before - 1);
    expect((await sandbox.get(`/invoices/${invoice.id}`)).status).toBe(404);
    expect((await sandbox.del(`/invoices/${invoice.id}`)).status).toBe(404);
    expect(await totalCount(sandbox)).toBe(before - 1);
  });

  it("refuses to delete an invoice once a payment was attempted, with a 409", async () => {
    const invoice = await create(sandbox);
    await attachTransaction(local.project.sandbox.project_id, invoice.id);
    const before = await totalCount(sandbox);
    const { status, body } = await sandbox.del(`/invoices/${invoice.id}`);
    expect(status).toBe(409);
    expect(body.error_type).toBe("request.invoice.payment-attempted");
    expect((await sandbox.get(`/invoices/${invoice.id}`)).status).toBe(200);
    expect(await totalCount(sandbox)).toBe(before);
  });
});

describe("conditional invoice writes (table access)", () => {
  it("refuses an update made from a stale read, and one after a payment was attempted", async () => {
    const scope = local.project.sandbox.project_id;
    const invoice = await create(sandbox);
    const read = await findInvoice(scope, invoice.id);
    if (!read) throw new Error("the invoice was just created");

    expect(await updateInvoice(read, { name: "first" }, {})).toBe("updated");
    expect(await updateInvoice(read, { name: "stale" }, {})).toBe("changed");

    const fresh = await findInvoice(scope, invoice.id);
    if (!fresh) throw new Error("the invoice is still there");
    await attachTransaction(scope, invoice.id);
    expect(await updateInvoice(fresh, { name: "too late" }, {})).toBe("payment-attempted");
    expect((await sandbox.get(`/invoices/${invoice.id}`)).body.invoice.name).toBe("first");
  });

  it("refuses an update of an invoice deleted meanwhile, and names a link that is gone", async () => {
    const scope = local.project.sandbox.project_id;
    const invoice = await create(sandbox);
    const read = await findInvoice(scope, invoice.id);
    if (!read) throw new Error("the invoice was just created");
    expect(await updateInvoice(read, {}, { customerId: newId("customer") })).toEqual({ missing: "customer" });
    await sandbox.del(`/invoices/${invoice.id}`);
    expect(await updateInvoice(read, { name: "ghost" }, {})).toBe("not-found");
  });
});
