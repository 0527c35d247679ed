import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { newId } from "../../shared/ids.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("Cards test");
const { sandbox, live } = local;

/** The browser's client: the project id alone, with an empty password, as the web library sends it. */
const browser = (environment: "sandbox" | "live" = "sandbox") =>
  api(local.url, { project_id: local.project[environment].project_id, private_key: "" });

const visa = {
  number: "4242 4242 4242 4242",
  exp_month: "12",
  exp_year: "30",
  cvc2: "123",
  name: "Ada Lovelace",
};
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function storedCard(scope: string, id: string) {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item;
}

describe("POST /cards", () => {
  it("tokenizes a card with the project id alone and answers the reference's Card shape", async () => {
    const { status, body } = await browser().post("/cards", { ...visa, metadata: { order: "42" } });
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      card: {
        id: expect.stringMatching(/^card_[0-9A-Z]{26}$/),
        project_id: expect.stringMatching(/^test-proj_/),
        scheme: "visa",
        co_scheme: null,
        preferred_scheme: null,
        // No BIN table tells credit from debit; the iOS library decodes the type as a string.
        type: "unknown",
        bank_name: null,
        brand: null,
        category: null,
        iin: "424242",
        last_4_digits: "4242",
        exp_month: 12,
        exp_year: 2030,
        expires_soon: false,
        cvc_check: "pending",
        avs_check: "unavailable",
        name: "Ada Lovelace",
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        metadata: { order: "42" },
        sandbox: true,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: body.card.created_at,
      },
    });
  });

  it("accepts form encoding, the mobile libraries' cvc, and no CVC at all", async () => {
    const form = await browser().post(
      "/cards",
      "number=378282246310005&exp_month=01&exp_year=2031&cvc=1234&metadata[k]=v",
      { form: true },
    );
    expect(form.status).toBe(200);
    expect(form.body.card).toMatchObject({
      scheme: "american-express",
      iin: "378282",
      last_4_digits: "0005",
      exp_month: 1,
      exp_year: 2031,
      cvc_check: "pending",
      metadata: { k: "v" },
    });
    const withoutCvc = await browser().post("/cards", {
      number: "5555555555554444",
      exp_month: 3,
      exp_year: 2032,
    });
    expect(withoutCvc.body.card).toMatchObject({ scheme: "mastercard", cvc_check: "unavailable" });
  });

  it("also accepts the private key, and refuses a wrong one or an unknown project", async () => {
    expect((await sandbox.post("/cards", visa)).status).toBe(200);
    const wrongKey = api(local.url, {
      project_id: local.project.sandbox.project_id,
      private_key: "key_sandbox_x",
    });
    const wrong = await wrongKey.post("/cards", visa);
    expect(wrong.status).toBe(401);
    expect(wrong.body.error_type).toBe("request.authentication.invalid");
    const unknown = api(local.url, { project_id: "proj_01JZZZZZZZZZZZZZZZZZZZZZZZ", private_key: "" });
    expect((await unknown.post("/cards", visa)).body.error_type).toBe(
      "request.authentication.invalid-project-id",
    );
    expect((await fetch(`${local.url}/cards`, { method: "POST" })).status).toBe(401);
  });

  it("refuses a bad number with 400 card.invalid-number naming number", async () => {
    for (const number of ["4242424242424241", "42424242", "not a number"]) {
      const { status, body } = await browser().post("/cards", { ...visa, number });
      expect(status).toBe(400);
      expect(body).toMatchObject({ success: false, error_type: "card.invalid-number" });
      expect(body.invalid_fields).toEqual([expect.objectContaining({ name: "number" })]);
    }
  });

  it.each([
    ["an expired card", { exp_month: "1", exp_year: "2020" }, "exp_year"],
    ["a month of 13", { exp_month: "13" }, "exp_month"],
    ["a 3-digit CVC on American Express", { number: "378282246310005", cvc2: "123" }, "cvc2"],
    ["a name over 255 characters", { name: "n".repeat(256) }, "name"],
  ])("refuses %s with a 400 request.validation.* naming the field", async (_, change, name) => {
    const { status, body } = await browser().post("/cards", { ...visa, ...change });
    expect(status).toBe(400);
    expect(body.error_type).toMatch(/^request\.validation\./);
    expect(body.invalid_fields).toEqual([expect.objectContaining({ name })]);
  });

  it("gives one card one fingerprint in sandbox and live, and another project another", async () => {
    const sandboxCard = (await browser().post("/cards", visa)).body.card;
    const liveCard = (await browser("live").post("/cards", visa)).body.card;
    const other = await createProject("Other cards");
    const otherCard = (
      await api(local.url, { project_id: other.sandbox.project_id, private_key: "" }).post("/cards", visa)
    ).body.card;
    expect(liveCard.fingerprint).toBe(sandboxCard.fingerprint);
    expect(liveCard.sandbox).toBe(false);
    expect(otherCard.fingerprint).not.toBe(sandboxCard.fingerprint);
  });

  it("replays an idempotent retry with the first card, and refuses the key for another card", async () => {
    const idempotencyKey = `card-${newId("card")}`;
    const first = await browser().post("/cards", visa, { idempotencyKey });
    const again = await browser().post("/cards", visa, { idempotencyKey });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const otherCard = await browser().post(
      "/cards",
      { ...visa, number: "5555555555554444" },
      { idempotencyKey },
    );
    expect(otherCard.status).toBe(400);
    expect(otherCard.body.error_type).toBe("request.idempotency-key.invalid");
  });

  it("stores the number and CVC sealed, never in clear", async () => {
    const card = (await browser().post("/cards", visa)).body.card;
    const item = await storedCard(local.project.sandbox.project_id, card.id);
    expect(item).toMatchObject({
      type: "card",
      number_sealed: { v: 1, kek: "file" },
      cvc_sealed: { v: 1, kek: "file" },
      last_4_digits: "4242",
    });
    expect(JSON.stringify(item)).not.toContain("4242424242424242");
  });
});

describe("GET and DELETE /cards/{id}", () => {
  it("returns the card as created, to the private key only", async () => {
    const card = (await browser().post("/cards", visa)).body.card;
    const { status, body } = await sandbox.get(`/cards/${card.id}`);
    expect(status).toBe(200);
    expect(body).toEqual({ success: true, card });
    expect((await browser().get(`/cards/${card.id}`)).status).toBe(401);
  });

  it("keeps each environment's cards to itself", async () => {
    const card = (await browser().post("/cards", visa)).body.card;
    const other = api(local.url, (await createProject("Other")).sandbox);
    for (const client of [live, other]) {
      const { status, body } = await client.get(`/cards/${card.id}`);
      expect(status).toBe(404);
      expect(body.error_type).toBe("resource.card.not-found");
      expect((await client.del(`/cards/${card.id}`)).status).toBe(404);
    }
    expect((await sandbox.get("/cards/not-a-card")).status).toBe(404);
  });

  it("anonymizes a card: secrets, name and metadata go, what past payments show stays", async () => {
    const card = (await browser().post("/cards", { ...visa, metadata: { k: "v" } })).body.card;
    const deleted = await sandbox.del(`/cards/${card.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });

    const item = await storedCard(local.project.sandbox.project_id, card.id);
    expect(item).not.toHaveProperty("number_sealed");
    expect(item).not.toHaveProperty("cvc_sealed");
    expect(item).toMatchObject({
      name: null,
      metadata: {},
      anonymized_at: expect.stringMatching(ISO_MS),
      iin: "424242",
      last_4_digits: "4242",
      scheme: "visa",
      exp_month: 12,
      exp_year: 2030,
      fingerprint: card.fingerprint,
    });
    expect((await sandbox.get(`/cards/${card.id}`)).status).toBe(404);
    expect((await sandbox.del(`/cards/${card.id}`)).status).toBe(404);
  });

  it("anonymizes a card once when deletions race", async () => {
    const card = (await browser().post("/cards", visa)).body.card;
    const answers = await Promise.all(Array.from({ length: 5 }, () => sandbox.del(`/cards/${card.id}`)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 404, 404, 404, 404]);
  });
});
