import { afterEach, describe, expect, it, vi } from "vitest";
import { keys } from "../../shared/db/keys.ts";
import { newId } from "../../shared/ids.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { recordedEvents } from "../support/events.ts";
import { holdItemReads } from "../support/held-reads.ts";
import { basicAuthorization, type RawRequest, sendRaw } from "../support/raw-http.ts";

/**
 * Issue 21: products, a reusable priced payment link. CRUD as the official clients call it, an
 * invoice made from a product as `POST /invoices` makes one, and the product's `url` over real HTTP:
 * a page that makes nothing when fetched, whose button makes a fresh invoice and goes (303) to its
 * checkout page.
 */
const local = useInProcessApi("Products test");

type Body = Record<string, unknown>;

const gold = (fields: Body = {}) => ({
  name: "Gold membership",
  amount: "19.90",
  currency: "EUR",
  ...fields,
});

async function environment(name = "Products") {
  const project = await createProject(name);
  const { project_id: projectId, private_key: privateKey } = project.sandbox;
  const client = api(local.url, project.sandbox);
  /** A request as a client library sends it: its headers, its query string, its body text. */
  const raw = async (request: Omit<RawRequest, "headers"> & { headers?: Record<string, string> }) => {
    const answer = await sendRaw(local.url, {
      ...request,
      headers: {
        authorization: basicAuthorization(projectId, privateKey),
        "user-agent": "client-library/1.0",
        "api-version": "1.4.0.0",
        ...request.headers,
      },
    });
    // biome-ignore lint/suspicious/noExplicitAny: answers are asserted on, not typed (as in the harness)
    return { status: answer.status, body: JSON.parse(answer.text) as any };
  };
  return { client, raw, projectId, project };
}

const json = (body: Body) => ({
  headers: { "content-type": "application/json", accept: "application/json" },
  body: JSON.stringify(body),
});

async function invoiceCount(client: Client): Promise<number> {
  return (await client.get("/invoices?limit=1")).body.total_count;
}

const eventsAbout = async (scope: string, productId: string) =>
  (await recordedEvents(scope))
    .filter((event) => (event.data as { product?: { id: string } }).product?.id === productId)
    .map((event) => event.name);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("products", () => {
  it("are created with the reference's fields, read back, and recorded as product.created", async () => {
    const body = gold({ metadata: { tier: "gold" }, return_url: "https://shop.example.com/thanks" });

    const created = await local.sandbox.post("/products", body);

    expect(created.status).toBe(200);
    const product = created.body.product;
    expect(product).toEqual({
      id: expect.stringMatching(/^prod_[0-9A-HJKMNP-TV-Z]{26}$/),
      project_id: local.project.sandbox.project_id,
      url: expect.any(String),
      name: "Gold membership",
      amount: "19.90",
      currency: "EUR",
      metadata: { tier: "gold" },
      return_url: "https://shop.example.com/thanks",
      cancel_url: null,
      sandbox: true,
      created_at: expect.any(String),
    });
    const url = new URL(product.url);
    expect(`${url.origin}${url.pathname}`).toBe(
      `${local.url}/pay/${local.project.sandbox.project_id}/${product.id}`,
    );
    expect(url.searchParams.get("key")).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await local.sandbox.get(`/products/${product.id}`)).body).toEqual({ success: true, product });
    expect(await eventsAbout(local.project.sandbox.project_id, product.id)).toEqual(["product.created"]);
  });

  it("give each product a link key of its own", async () => {
    const [first, second] = await Promise.all([
      local.sandbox.post("/products", gold()),
      local.sandbox.post("/products", gold()),
    ]);
    const key = (response: { body: { product: { url: string } } }) =>
      new URL(response.body.product.url).searchParams.get("key");
    expect(key(first)).not.toBe(key(second));
  });

  it.each([
    [{ name: undefined }, "name"],
    [{ name: "" }, "name"],
    [{ name: "x".repeat(81) }, "name"],
    [{ amount: undefined }, "amount"],
    [{ amount: "0" }, "amount"],
    [{ amount: "-1.00" }, "amount"],
    [{ amount: "1e2" }, "amount"],
    [{ amount: "9.999" }, "amount"],
    [{ amount: "10.5", currency: "JPY" }, "amount"],
    [{ currency: "XYZ" }, "currency"],
    [{ currency: undefined }, "currency"],
    [{ return_url: "not a url" }, "return_url"],
    [{ cancel_url: "ftp://shop.example.com" }, "cancel_url"],
    [{ metadata: { ["k".repeat(41)]: "v" } }, `metadata.${"k".repeat(41)}`],
    [{ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) }, "metadata"],
    // The invoices made from it read this key: it must hold a number, as on an invoice.
    [{ metadata: { taxes_amount: "a lot" } }, "metadata.taxes_amount"],
  ])("refuse %j with a 400 naming %s, and make nothing", async (change, field) => {
    const { client } = await environment("Products validation");

    const { status, body } = await client.post("/products", gold(change));

    expect(status).toBe(400);
    expect(body.error_type).toMatch(/^request\.validation\./);
    expect(body.invalid_fields.map((item: { name: string }) => item.name)).toContain(field);
    expect((await client.get("/products")).body.total_count).toBe(0);
  });

  it("change the fields sent, keep the others, and clear a URL with an empty string", async () => {
    const product = (
      await local.sandbox.post("/products", gold({ return_url: "https://shop.example.com/ok" }))
    ).body.product;

    const changed = await local.sandbox.put(`/products/${product.id}`, {
      name: "Platinum",
      amount: "29.90",
      metadata: { tier: "platinum" },
      return_url: "",
    });

    expect(changed.status).toBe(200);
    expect(changed.body.product).toEqual({
      ...product,
      name: "Platinum",
      amount: "29.90",
      metadata: { tier: "platinum" },
      return_url: null,
    });
    expect((await local.sandbox.get(`/products/${product.id}`)).body.product).toEqual(changed.body.product);
    expect(await eventsAbout(local.project.sandbox.project_id, product.id)).toEqual([
      "product.created",
      "product.updated",
    ]);
  });

  it("refuse a change that leaves the amount unfit for the currency, naming the field that changed", async () => {
    const product = (await local.sandbox.post("/products", gold({ amount: "19.90" }))).body.product;

    const currencyOnly = await local.sandbox.put(`/products/${product.id}`, { currency: "JPY" });
    const both = await local.sandbox.put(`/products/${product.id}`, { currency: "JPY", amount: "1.5" });

    expect(currencyOnly.status).toBe(400);
    expect(currencyOnly.body.invalid_fields).toEqual([{ name: "currency", message: expect.any(String) }]);
    expect(both.status).toBe(400);
    expect(both.body.invalid_fields).toEqual([{ name: "amount", message: expect.any(String) }]);
    expect((await local.sandbox.get(`/products/${product.id}`)).body.product).toEqual(product);
  });

  it("are deleted: never read, changed, listed or invoiced again, and out of the count", async () => {
    const { client, projectId } = await environment("Products deletion");
    const kept = (await client.post("/products", gold())).body.product;
    const product = (await client.post("/products", gold({ name: "Old" }))).body.product;
    expect((await client.get("/products")).body.total_count).toBe(2);

    const deleted = await client.del(`/products/${product.id}`);

    expect(deleted).toMatchObject({ status: 200, body: { success: true } });
    expect(deleted.body).toEqual({ success: true });
    for (const attempt of [
      client.get(`/products/${product.id}`),
      client.put(`/products/${product.id}`, { name: "Back" }),
      client.del(`/products/${product.id}`),
      client.post(`/products/${product.id}/invoices`, {}),
    ]) {
      const { status, body } = await attempt;
      expect(status).toBe(404);
      expect(body.error_type).toBe("resource.product.not-found");
    }
    const listed = (await client.get("/products?limit=100")).body;
    expect(listed.products.map((item: { id: string }) => item.id)).toEqual([kept.id]);
    expect(listed.total_count).toBe(1);
    expect(await invoiceCount(client)).toBe(0);
    expect(await eventsAbout(projectId, product.id)).toEqual(["product.created", "product.deleted"]);
  });

  it("list with the envelope, total_count and id cursors", async () => {
    const { client } = await environment("Products listing");
    expect((await client.get("/products")).body).toMatchObject({
      success: true,
      products: [],
      count: 0,
      has_more: false,
      total_count: 0,
    });
    const ids: string[] = [];
    for (const name of ["A", "B", "C"])
      ids.push((await client.post("/products", gold({ name }))).body.product.id);

    const first = await client.get("/products?limit=2&order=asc");

    expect(first.body).toMatchObject({ count: 2, has_more: true, total_count: 3, limit: 2, order: "asc" });
    expect(first.body.products.map((item: { id: string }) => item.id)).toEqual(ids.slice(0, 2));
    const next = await client.get(`/products?limit=2&order=asc&start_after=${ids[1]}`);
    expect(next.body.products.map((item: { id: string }) => item.id)).toEqual([ids[2]]);
    const newestFirst = await client.get("/products");
    expect(newestFirst.body.products.map((item: { id: string }) => item.id)).toEqual([...ids].reverse());
    expect((await client.get("/products?start_after=nope")).status).toBe(400);
  });

  it("are not seen, changed, deleted or invoiced from another environment or project", async () => {
    const product = (await local.sandbox.post("/products", gold())).body.product;
    const other = api(local.url, (await createProject("Other products")).sandbox);

    for (const stranger of [local.live, other]) {
      for (const attempt of [
        stranger.get(`/products/${product.id}`),
        stranger.put(`/products/${product.id}`, { name: "Mine" }),
        stranger.del(`/products/${product.id}`),
        stranger.post(`/products/${product.id}/invoices`, {}),
      ]) {
        const { status, body } = await attempt;
        expect(status).toBe(404);
        expect(body.error_type).toBe("resource.product.not-found");
      }
      const listed = (await stranger.get("/products?limit=100")).body.products;
      expect(listed.map((item: { id: string }) => item.id)).not.toContain(product.id);
    }
    expect((await local.sandbox.get(`/products/${product.id}`)).body.product).toEqual(product);
  });

  it("answer a well-formed unknown id and a malformed one with a 404", async () => {
    for (const id of [newId("product"), "prod_nope", "cust_01J0000000000000000000000A"]) {
      const { status, body } = await local.sandbox.get(`/products/${id}`);
      expect(status).toBe(404);
      expect(body.error_type).toBe("resource.product.not-found");
    }
  });
});

describe("an invoice made from a product", () => {
  it("copies the product's name, amount, currency, metadata and URLs, as POST /invoices makes one", async () => {
    const { client } = await environment("Product invoices");
    const product = (
      await client.post(
        "/products",
        gold({
          metadata: { sku: "G-1" },
          return_url: "https://shop.example.com/ok",
          cancel_url: "https://shop.example.com/cancel",
        }),
      )
    ).body.product;

    const made = await client.post(`/products/${product.id}/invoices`, {});

    expect(made.status).toBe(200);
    const invoice = made.body.invoice;
    expect(invoice).toMatchObject({
      id: expect.stringMatching(/^iv_/),
      project_id: product.project_id,
      name: "Gold membership",
      amount: "19.90",
      currency: "EUR",
      metadata: { sku: "G-1" },
      return_url: "https://shop.example.com/ok",
      cancel_url: "https://shop.example.com/cancel",
      customer_id: null,
      transaction_id: null,
      sandbox: true,
    });
    // The very invoice POST /invoices would have made: read back and listed as any.
    expect((await client.get(`/invoices/${invoice.id}`)).body.invoice).toEqual(invoice);
    const plain = (await client.post("/invoices", { name: "x", amount: "1.00", currency: "EUR" })).body
      .invoice;
    expect(Object.keys(invoice)).toEqual(Object.keys(plain));
    expect(await invoiceCount(client)).toBe(2);
    const second = (await client.post(`/products/${product.id}/invoices`, {})).body.invoice;
    expect(second.id).not.toBe(invoice.id);
    expect(second.url).not.toBe(invoice.url);
  });

  it("honours an Idempotency-Key: the same key makes one invoice and replays it", async () => {
    const { client } = await environment("Product invoice keys");
    const product = (await client.post("/products", gold())).body.product;
    const key = crypto.randomUUID();

    const [first, second] = await Promise.all([
      client.post(`/products/${product.id}/invoices`, {}, { idempotencyKey: key }),
      client.post(`/products/${product.id}/invoices`, {}, { idempotencyKey: key }),
    ]);
    const third = await client.post(`/products/${product.id}/invoices`, {}, { idempotencyKey: key });

    expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
    expect(second.body.invoice.id).toBe(first.body.invoice.id);
    expect(third.body.invoice).toEqual(first.body.invoice);
    expect(third.headers.get("idempotent-replayed")).toBe("true");
    expect(await invoiceCount(client)).toBe(1);
  });

  it("expands as POST /invoices does", async () => {
    const { client, projectId } = await environment("Product invoice expand");
    const product = (await client.post("/products", gold())).body.product;

    const made = await client.post(`/products/${product.id}/invoices?expand=project`, {});

    expect(made.body.invoice.project).toMatchObject({ id: projectId });
    expect((await client.post(`/products/${product.id}/invoices?expand=nothing`, {})).status).toBe(400);
    expect(await invoiceCount(client)).toBe(1);
  });

  it("keeps what it copied when the product changes later", async () => {
    const { client } = await environment("Product invoice copies");
    const product = (await client.post("/products", gold())).body.product;
    const invoice = (await client.post(`/products/${product.id}/invoices`, {})).body.invoice;

    await client.put(`/products/${product.id}`, { name: "Renamed", amount: "99.00" });
    await client.del(`/products/${product.id}`);

    expect((await client.get(`/invoices/${invoice.id}`)).body.invoice).toMatchObject({
      name: "Gold membership",
      amount: "19.90",
    });
  });
});

describe("concurrent changes", () => {
  it("let one of two PUTs that read the same version win; the other is a 409 and writes nothing", async () => {
    const { client, projectId } = await environment("Product races");
    const product = (await client.post("/products", gold())).body.product;
    const hold = holdItemReads(keys.resource(projectId, product.id), 2);

    const first = client.put(`/products/${product.id}`, { name: "First" });
    const second = client.put(`/products/${product.id}`, { name: "Second" });
    await hold.reads(2);
    hold.release();
    const answers = await Promise.all([first, second]);

    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409]);
    const loser = answers.find((answer) => answer.status === 409);
    const winner = answers.find((answer) => answer.status === 200);
    expect(loser?.body.error_type).toBe("request.product.concurrent-update");
    vi.restoreAllMocks();
    expect((await client.get(`/products/${product.id}`)).body.product.name).toBe(winner?.body.product.name);
    expect(await eventsAbout(projectId, product.id)).toEqual(["product.created", "product.updated"]);
  });

  it("make an invoice of the product as it is when the invoice is written, not as it was read", async () => {
    const { client, projectId } = await environment("Product invoice race");
    const product = (await client.post("/products", gold())).body.product;
    const hold = holdItemReads(keys.resource(projectId, product.id), 1);

    const making = client.post(`/products/${product.id}/invoices`, {});
    await hold.reads(1);
    // Changed after the invoice's request read the product, before it wrote the invoice.
    const changed = await client.put(`/products/${product.id}`, { amount: "25.00" });
    expect(changed.status).toBe(200);
    hold.release();
    const made = await making;

    expect(made.status).toBe(200);
    expect(made.body.invoice.amount).toBe("25.00");
    vi.restoreAllMocks();
    expect(await invoiceCount(client)).toBe(1);
  });

  it("make no invoice of a product deleted between the read and the write", async () => {
    const { client, projectId } = await environment("Product invoice delete race");
    const product = (await client.post("/products", gold())).body.product;
    const hold = holdItemReads(keys.resource(projectId, product.id), 1);

    const making = client.post(`/products/${product.id}/invoices`, {});
    await hold.reads(1);
    expect((await client.del(`/products/${product.id}`)).status).toBe(200);
    hold.release();
    const made = await making;

    expect(made.status).toBe(404);
    expect(made.body.error_type).toBe("resource.product.not-found");
    vi.restoreAllMocks();
    expect(await invoiceCount(client)).toBe(0);
  });
});

describe("the official clients' calls", () => {
  it("create with null for every unset key (Python, PHP, Ruby) and with them omitted (Node)", async () => {
    const { raw } = await environment("Product clients");
    const withNulls = await raw({
      method: "POST",
      target: "/products",
      ...json({
        name: "Gold",
        amount: "19.90",
        currency: "EUR",
        metadata: null,
        return_url: null,
        cancel_url: null,
        expand: null,
        limit: 0,
      }),
    });
    const omitted = await raw({
      method: "POST",
      target: "/products",
      ...json({ name: "Gold", amount: "19.90", currency: "EUR" }),
    });

    for (const answer of [withNulls, omitted]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.product).toMatchObject({ metadata: {}, return_url: null, cancel_url: null });
    }
  });

  it("update with the product echoed as read, read-only fields included, and null for unset keys", async () => {
    const { client, raw } = await environment("Product client updates");
    const product = (await client.post("/products", gold({ return_url: "https://shop.example.com/ok" }))).body
      .product;

    const echoed = await raw({
      method: "PUT",
      target: `/products/${product.id}`,
      ...json({ ...product, name: "Echoed" }),
    });
    const nulls = await raw({
      method: "PUT",
      target: `/products/${product.id}`,
      ...json({
        name: "Nulls",
        amount: null,
        currency: null,
        metadata: null,
        return_url: null,
        cancel_url: null,
      }),
    });

    expect(echoed.status, JSON.stringify(echoed.body)).toBe(200);
    expect(echoed.body.product).toEqual({ ...product, name: "Echoed" });
    expect(nulls.status, JSON.stringify(nulls.body)).toBe(200);
    expect(nulls.body.product).toEqual({ ...product, name: "Nulls" });
  });

  it("list, read and delete with the listing parameters, the literal null and Python's None", async () => {
    const { client, raw } = await environment("Product client queries");
    const product = (await client.post("/products", gold())).body.product;

    for (const target of [
      "/products?filter=&limit=0&end_before=&start_after=",
      "/products?expand=None&filter=None&limit=10&end_before=None&start_after=None",
      "/products?limit=null&order=null&start_after=null&end_before",
      "/products?",
    ]) {
      const { status, body } = await raw({ method: "GET", target, headers: { accept: "*/*" } });
      expect(status, `${target}: ${JSON.stringify(body)}`).toBe(200);
      expect(body).toMatchObject({ success: true, total_count: 1, products: [{ id: product.id }] });
    }
    const read = await raw({ method: "GET", target: `/products/${product.id}?expand=None&filter=&limit=0` });
    expect(read.body).toEqual({ success: true, product });
    const deleted = await raw({
      method: "DELETE",
      target: `/products/${product.id}?filter=&limit=0&end_before=&start_after=`,
      ...json({ expand: null }),
    });
    expect(deleted).toEqual({ status: 200, body: { success: true } });
  });

  it("make an invoice with an empty body, as each client sends it", async () => {
    const { client, raw } = await environment("Product client invoices");
    const product = (await client.post("/products", gold())).body.product;

    const answers = [
      await raw({ method: "POST", target: `/products/${product.id}/invoices`, ...json({}) }),
      await raw({
        method: "POST",
        target: `/products/${product.id}/invoices?filter=&limit=0`,
        ...json({ expand: null }),
      }),
      await raw({
        method: "POST",
        target: `/products/${product.id}/invoices`,
        headers: { "idempotency-key": "" },
      }),
    ];

    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.invoice).toMatchObject({
        name: "Gold membership",
        amount: "19.90",
        currency: "EUR",
      });
    }
    expect(await invoiceCount(client)).toBe(3);
  });
});

/** A request the way a browser (or a bot) sends it: no credentials, redirects not followed. */
const browse = (url: string, init: RequestInit = {}) =>
  fetch(url, { redirect: "manual", ...init }).then(async (response) => ({
    response,
    text: await response.text(),
  }));

/** The form of a product's page, as a browser would post it. */
function formOf(page: string): { action: string; fields: URLSearchParams } {
  const action = /<form method="post" action="([^"]+)">/.exec(page)?.[1];
  if (!action) throw new Error(`No form on the page:\n${page}`);
  const fields = new URLSearchParams();
  for (const [, name, value] of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields.set(name as string, value as string);
  }
  return { action: action.replaceAll("&amp;", "&"), fields };
}

const post = (action: string, fields: URLSearchParams, init: RequestInit = {}) =>
  browse(action, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: fields.toString(),
    ...init,
  });

describe("a product's link", () => {
  it("shows the product and a Pay button, and makes nothing however often it is fetched", async () => {
    const { client } = await environment("Product link page");
    const product = (await client.post("/products", gold({ name: "Tea & <biscuits>" }))).body.product;

    const previews = await Promise.all(
      ["Slackbot-LinkExpanding 1.0", "WhatsApp/2.23", "Mozilla/5.0"].map((agent) =>
        browse(product.url, { headers: { "user-agent": agent } }),
      ),
    );

    for (const { response, text } of previews) {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/html");
      expect(text).toContain("<h1>Tea &amp; &lt;biscuits&gt;</h1>");
      expect(text).toContain("19.90 EUR");
      expect(text).toContain('<button type="submit">Pay 19.90 EUR</button>');
      expect(text).toContain("<strong>Sandbox</strong>");
      expect(text).toContain('<meta name="robots" content="noindex">');
      const policy = response.headers.get("content-security-policy") ?? "";
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain(`form-action ${local.url}`);
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).not.toContain("unsafe-inline");
      expect(response.headers.get("cache-control")).toBe("no-store");
    }
    expect(await invoiceCount(client)).toBe(0);
  });

  it("makes a fresh invoice on each Pay and sends the browser (303) to its checkout page", async () => {
    const { client, projectId } = await environment("Product link pay");
    const product = (await client.post("/products", gold({ metadata: { sku: "G-1" } }))).body.product;
    const page = await browse(product.url);
    const form = formOf(page.text);
    expect(form.action).toBe(`${local.url}/pay/${projectId}/${product.id}`);

    const paid = await post(form.action, form.fields);

    expect(paid.response.status).toBe(303);
    const location = paid.response.headers.get("location") ?? "";
    expect(location.startsWith(`${local.url}/checkout/${projectId}/iv_`)).toBe(true);
    const invoiceId = new URL(location).pathname.split("/").pop() as string;
    const invoice = (await client.get(`/invoices/${invoiceId}`)).body.invoice;
    expect(invoice).toMatchObject({
      url: location,
      name: "Gold membership",
      amount: "19.90",
      currency: "EUR",
      metadata: { sku: "G-1" },
    });
    const checkout = await browse(location);
    expect(checkout.response.status).toBe(200);
    expect(checkout.text).toContain("<h1>Gold membership</h1>");
    expect(checkout.text).toContain("Total <strong>19.90 EUR</strong>");
    expect(checkout.text).toContain(`data-invoice-id="${invoiceId}"`);

    // Another visit of the link: another invoice.
    const again = await post(form.action, formOf((await browse(product.url)).text).fields);
    expect(again.response.status).toBe(303);
    expect(again.response.headers.get("location")).not.toBe(location);
    expect(await invoiceCount(client)).toBe(2);
  });

  it("lands, following the redirect, on the checkout page of an invoice of the product's amount", async () => {
    const { client } = await environment("Product link follow");
    const product = (await client.post("/products", gold({ amount: "1250", currency: "JPY" }))).body.product;
    const form = formOf((await browse(product.url)).text);

    const response = await fetch(form.action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.fields.toString(),
    });
    const text = await response.text();

    expect(response.status).toBe(200);
    expect(response.redirected).toBe(true);
    expect(response.url).toMatch(new RegExp(`^${local.url}/checkout/`));
    expect(text).toContain("Total <strong>1250 JPY</strong>");
    expect(text).toContain('<form id="pay"');
    const invoices = (await client.get("/invoices")).body.invoices;
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ amount: "1250", currency: "JPY", url: response.url });
  });

  it("makes one invoice of one visit's form posted twice (a double click, a resent post)", async () => {
    const { client } = await environment("Product link twice");
    const product = (await client.post("/products", gold())).body.product;
    const form = formOf((await browse(product.url)).text);

    const [first, second] = await Promise.all([
      post(form.action, form.fields),
      post(form.action, form.fields),
    ]);
    const third = await post(form.action, form.fields);

    const locations = [first, second, third].map((answer) => answer.response.headers.get("location"));
    expect([first, second, third].map((answer) => answer.response.status)).toEqual([303, 303, 303]);
    expect(new Set(locations).size).toBe(1);
    expect(await invoiceCount(client)).toBe(1);
  });

  it("is not found, and makes nothing, without its key, with a wrong key, or under another environment", async () => {
    const { client, project } = await environment("Product link keys");
    const product = (await client.post("/products", gold())).body.product;
    const withoutKey = product.url.split("?")[0] as string;
    const attempts = [
      withoutKey,
      `${withoutKey}?key=${"A".repeat(32)}`,
      product.url.replace(project.sandbox.project_id, project.live.project_id),
      product.url.replace(project.sandbox.project_id, local.project.sandbox.project_id),
      `${local.url}/pay/${project.sandbox.project_id}/prod_nope?key=x`,
    ];

    for (const attempt of attempts) {
      const shown = await browse(attempt);
      expect(shown.response.status, attempt).toBe(404);
      expect(shown.text, attempt).toContain("Payment link not found");
      expect(shown.text, attempt).not.toContain("Gold membership");
      const [path, query] = attempt.split("?");
      const fields = new URLSearchParams(query ?? "");
      const posted = await post(path as string, fields);
      expect(posted.response.status, attempt).toBe(404);
    }
    expect(await invoiceCount(client)).toBe(0);
  });

  it("answers a deleted product's link with a clear 404 page, and makes nothing", async () => {
    const { client } = await environment("Product link deleted");
    const product = (await client.post("/products", gold())).body.product;
    const form = formOf((await browse(product.url)).text);
    await client.del(`/products/${product.id}`);

    const shown = await browse(product.url);
    const posted = await post(form.action, form.fields);

    for (const answer of [shown, posted]) {
      expect(answer.response.status).toBe(404);
      expect(answer.response.headers.get("content-type")).toContain("text/html");
      expect(answer.text).toContain("This payment link is no longer available");
      expect(answer.text).not.toContain("Gold membership");
    }
    expect(await invoiceCount(client)).toBe(0);
  });

  it("keeps working after the product changes, at its new price", async () => {
    const { client } = await environment("Product link change");
    const product = (await client.post("/products", gold())).body.product;
    await client.put(`/products/${product.id}`, { amount: "5.00", name: "Bronze" });

    const page = await browse(product.url);
    const paid = await post(formOf(page.text).action, formOf(page.text).fields);

    expect(page.text).toContain("Pay 5.00 EUR");
    const checkout = await browse(paid.response.headers.get("location") ?? "");
    expect(checkout.text).toContain("<h1>Bronze</h1>");
    expect(checkout.text).toContain("5.00 EUR");
  });
});
