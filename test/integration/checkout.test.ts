import { describe, expect, it } from "vitest";
import { useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Checkout page test");

async function invoice(fields: Record<string, unknown> = {}) {
  const { body } = await local.sandbox.post("/invoices", {
    name: "Order <42>",
    amount: "19.90",
    currency: "EUR",
    details: [{ name: "Tea & biscuits", amount: "19.90", quantity: 2 }],
    ...fields,
  });
  return body.invoice as { id: string; url: string };
}

const open = (url: string) =>
  fetch(url).then(async (response) => ({ response, text: await response.text() }));

describe("the hosted checkout page", () => {
  it("is served at the invoice's url: what is paid, escaped, and a card form, under a strict policy", async () => {
    const { url } = await invoice();
    expect(url.startsWith(`${local.url}/checkout/${local.project.sandbox.project_id}/`)).toBe(true);

    const { response, text } = await open(url);

    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(text).toContain("<h1>Order &lt;42&gt;</h1>");
    expect(text).toContain("19.90 EUR");
    expect(text).toContain("Tea &amp; biscuits");
    expect(text).toContain("<strong>Sandbox</strong>");
    for (const field of ["name", "number", "expiry", "cvc"]) expect(text).toContain(`<label for="${field}">`);
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain(`script-src ${local.url}`);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain("unsafe-inline");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("is not found with the invoice's id alone, a wrong key, or another environment's id", async () => {
    const { id, url } = await invoice();
    const withoutKey = url.split("?")[0] as string;
    const wrongKey = `${withoutKey}?key=${"A".repeat(32)}`;
    const otherEnvironment = url.replace(local.project.sandbox.project_id, local.project.live.project_id);

    for (const attempt of [withoutKey, wrongKey, otherEnvironment, `${local.url}/checkout/${id}`]) {
      const { response, text } = await open(attempt);
      expect(response.status, attempt).toBe(404);
      expect(text, attempt).not.toContain("Order");
    }
  });

  it("says an invoice is paid instead of offering the form again", async () => {
    const { id, url } = await invoice();
    const card = await local.sandbox.post("/cards", {
      number: "4242424242424242",
      exp_month: "12",
      exp_year: "2099",
      cvc2: "123",
    });
    await local.sandbox.post(`/invoices/${id}/capture`, { source: card.body.card.id });

    const { text } = await open(url);

    expect(text).toContain("This invoice is paid");
    expect(text).not.toContain('<form id="pay"');
  });

  it("says a voided payment was canceled, not paid", async () => {
    const { id, url } = await invoice();
    const card = await local.sandbox.post("/cards", {
      number: "4242424242424242",
      exp_month: "12",
      exp_year: "2099",
    });
    await local.sandbox.post(`/invoices/${id}/authorize`, { source: card.body.card.id });
    expect((await local.sandbox.post(`/invoices/${id}/void`, {})).status).toBe(200);

    const { text } = await open(url);

    expect(text).toContain("This payment was canceled");
    expect(text).not.toContain("is paid");
    expect(text).not.toContain('<form id="pay"');
  });
});

describe("the browser scripts", () => {
  it("serves the payments module at a stable path, as a JavaScript module a page of any origin may load", async () => {
    const response = await fetch(`${local.url}/assets/payments.js`, {
      headers: { origin: "https://shop.example" },
    });
    const text = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("cache-control")).toBe("public, max-age=300");
    expect(text).toMatch(/export\s*\{/);
    expect(text).toContain("makeCardPayment");
  });

  it("answers an unknown script with a 404", async () => {
    expect((await fetch(`${local.url}/assets/nothing.js`)).status).toBe(404);
    expect((await fetch(`${local.url}/assets/..%2Fpackage.json`)).status).toBe(404);
  });
});
