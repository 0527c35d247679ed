import { afterEach, describe, expect, it, vi } from "vitest";
import type { Coupon } from "../../shared/coupons/coupon.ts";
import { redeemableCoupon, redemptionRefusal } from "../../shared/coupons/service.ts";
import { couponRedemption } from "../../shared/coupons/store.ts";
import { keys } from "../../shared/db/keys.ts";
import { failedConditions, transactWrite } from "../../shared/db/transactions.ts";
import { authenticate } from "../../shared/http/auth.ts";
import type { ApiError } from "../../shared/http/errors.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { recordedEvents } from "../support/events.ts";
import { holdItemReads } from "../support/held-reads.ts";
import { basicAuthorization, type RawRequest, sendRaw } from "../support/raw-http.ts";

/**
 * Issue 22: coupons, as the Python and PHP clients call them (`GET`/`POST /coupons`,
 * `GET`/`PUT`/`DELETE /coupons/{id}`), modelled on plans: the merchant's own id, one versioned item
 * each, ended by `DELETE`. And the redemption API the subscriptions' discounts call: a redemption
 * is counted by a conditional write in the discount's own transaction, so no race redeems a coupon
 * past its `max_redemptions` or loses a count.
 */
const local = useInProcessApi("Coupons test");

type Body = Record<string, unknown>;

const couponId = () => `SAVE-${crypto.randomUUID().slice(0, 8)}`;
const percentOff = (fields: Body = {}) => ({ id: couponId(), percent_off: "20", ...fields });
const amountOff = (fields: Body = {}) => ({ id: couponId(), amount_off: "5.00", currency: "EUR", ...fields });
const inHours = (hours: number, from = Date.now()) => new Date(from + hours * 3_600_000).toISOString();

async function environment(name = "Coupons") {
  const project = await createProject(name);
  const { project_id: projectId, private_key: privateKey } = project.sandbox;
  const client = api(local.url, project.sandbox);
  /** A request as a client library sends it: its headers, its query string, its body text. */
  const raw = async (request: Omit<RawRequest, "headers"> & { headers?: Record<string, string> }) => {
    const answer = await sendRaw(local.url, {
      ...request,
      headers: { authorization: basicAuthorization(projectId, privateKey), ...request.headers },
    });
    // biome-ignore lint/suspicious/noExplicitAny: answers are asserted on, not typed (as in the harness)
    return { status: answer.status, body: JSON.parse(answer.text) as any };
  };
  /** The caller the HTTP core makes of the sandbox key (read anew: the environment's clock moves). */
  const caller = () => authenticate(basicAuthorization(projectId, privateKey), "private-key");
  return { client, raw, caller, projectId, project };
}

const json = (body: Body) => ({
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const form = (body: string) => ({
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body,
});

const eventsAbout = async (scope: string, id: string) =>
  (await recordedEvents(scope))
    .filter((event) => (event.data as { coupon?: { id: string } }).coupon?.id === id)
    .map((event) => event.name);

async function activitiesAbout(client: Client, id: string) {
  const { activities } = (await client.get("/activities?limit=100")).body;
  return (activities as { type: string; subject: { id: string } | null }[])
    .filter((activity) => activity.subject?.id === id)
    .map((activity) => activity.type)
    .reverse();
}

async function created(client: Client, body: Body): Promise<Coupon & Body> {
  const answer = await client.post("/coupons", body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.coupon;
}

/** Counts one redemption as the discount's transaction would, alone: `redeemed` or the refusal. */
async function redeem(coupon: Coupon, now = new Date()): Promise<"redeemed" | "refused"> {
  try {
    await transactWrite([couponRedemption(coupon, now)]);
    return "redeemed";
  } catch (error) {
    if (failedConditions(error)?.includes(0)) return "refused";
    throw error;
  }
}

async function refusalOf(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, "refused").toBeDefined();
  return error as ApiError;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("coupons", () => {
  it("are created under the merchant's id with the reference's fields, read back, and recorded", async () => {
    const { client, projectId } = await environment("Coupons created");
    const expiresAt = inHours(24 * 30);
    const body = { ...percentOff(), iteration_count: 3, max_redemptions: 100, expires_at: expiresAt };

    const answer = await client.post("/coupons", { ...body, metadata: { campaign: "spring" } });

    expect(answer.status).toBe(200);
    expect(answer.body.coupon).toEqual({
      id: body.id,
      project_id: projectId,
      amount_off: null,
      percent_off: "20",
      currency: null,
      iteration_count: 3,
      max_redemptions: 100,
      expires_at: expiresAt,
      metadata: { campaign: "spring" },
      redeemed_number: 0,
      sandbox: true,
      created_at: expect.any(String),
    });
    expect((await client.get(`/coupons/${body.id}`)).body).toEqual({
      success: true,
      coupon: answer.body.coupon,
    });
    expect(await eventsAbout(projectId, body.id)).toEqual(["coupon.created"]);
    expect(await activitiesAbout(client, body.id)).toEqual(["coupon.created"]);
  });

  it("take an amount off in its currency, which it must fit, or a percentage kept as sent", async () => {
    const { client } = await environment("Coupon discounts");

    const amount = await created(client, amountOff({ amount_off: "500", currency: "jpy" }));
    const percentage = await created(client, percentOff({ percent_off: "12.5" }));
    const whole = await created(client, percentOff({ percent_off: "100" }));
    const fine = await created(client, percentOff({ percent_off: "0.01" }));

    expect(amount).toMatchObject({ amount_off: "500", currency: "JPY", percent_off: null });
    expect(percentage).toMatchObject({ percent_off: "12.5", amount_off: null, currency: null });
    expect(whole.percent_off).toBe("100");
    expect(fine.percent_off).toBe("0.01");
    // Forever and without limits unless told otherwise.
    expect(percentage).toMatchObject({ iteration_count: null, max_redemptions: null, expires_at: null });
  });

  it("read numbers sent as JSON numbers or as strings alike", async () => {
    const { raw } = await environment("Coupon numbers");
    const id = couponId();

    const answer = await raw({
      method: "POST",
      target: "/coupons",
      headers: { "content-type": "application/json" },
      body: `{"id": "${id}", "percent_off": 12.5, "iteration_count": 3, "max_redemptions": "10"}`,
    });

    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.coupon).toMatchObject({
      percent_off: "12.5",
      iteration_count: 3,
      max_redemptions: 10,
    });
  });

  it("refuse a duplicate id with a 409 and change nothing, also when the first was ended", async () => {
    const { client } = await environment("Coupon duplicates");
    const first = await created(client, percentOff());

    const duplicate = await client.post("/coupons", { id: first.id, amount_off: "1.00", currency: "EUR" });

    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error_type).toBe("request.coupon.duplicate");
    expect((await client.get(`/coupons/${first.id}`)).body.coupon).toEqual(first);
    expect((await client.get("/coupons")).body.total_count).toBe(1);
    await client.del(`/coupons/${first.id}`);
    const again = await client.post("/coupons", percentOff({ id: first.id }));
    expect(again.status).toBe(409);
    expect(again.body.error_type).toBe("request.coupon.duplicate");
  });

  it.each([
    [{ id: undefined }, ["id"], "request.validation.missing-id"],
    [{ id: "" }, ["id"], "request.validation.invalid-id"],
    [{ id: "bad id/with slash" }, ["id"], "request.validation.invalid-id"],
    [{ id: "x".repeat(101) }, ["id"], "request.validation.invalid-id"],
    [{ id: ".." }, ["id"], "request.validation.invalid-id"],
    [{ id: { code: "x" } }, ["id"], "request.validation.invalid-id"],
    [{ percent_off: undefined }, ["amount_off", "percent_off"], "request.validation.missing-amount-off"],
    [
      { amount_off: "5.00", currency: undefined },
      ["amount_off", "percent_off"],
      "request.validation.invalid-amount-off",
    ],
    [{ percent_off: "0" }, ["percent_off"], "request.validation.invalid-percent-off"],
    [{ percent_off: "0.00" }, ["percent_off"], "request.validation.invalid-percent-off"],
    [{ percent_off: "100.01" }, ["percent_off"], "request.validation.invalid-percent-off"],
    [{ percent_off: "12.345" }, ["percent_off"], "request.validation.invalid-percent-off"],
    [{ percent_off: "-5" }, ["percent_off"], "request.validation.invalid-percent-off"],
    [{ percent_off: "1e1" }, ["percent_off"], "request.validation.invalid-percent-off"],
    [{ percent_off: "twenty" }, ["percent_off"], "request.validation.invalid-percent-off"],
    [{ percent_off: true }, ["percent_off"], "request.validation.invalid-percent-off"],
    [{ currency: "EUR" }, ["currency"], "request.validation.invalid-currency"],
    [{ iteration_count: 0 }, ["iteration_count"], "request.validation.invalid-iteration-count"],
    [{ iteration_count: -1 }, ["iteration_count"], "request.validation.invalid-iteration-count"],
    [{ iteration_count: "1.5" }, ["iteration_count"], "request.validation.invalid-iteration-count"],
    [{ iteration_count: "three" }, ["iteration_count"], "request.validation.invalid-iteration-count"],
    [{ max_redemptions: 0 }, ["max_redemptions"], "request.validation.invalid-max-redemptions"],
    [{ max_redemptions: "-3" }, ["max_redemptions"], "request.validation.invalid-max-redemptions"],
    [{ expires_at: "2001-01-01T00:00:00Z" }, ["expires_at"], "request.validation.invalid-expires-at"],
    [{ expires_at: "next week" }, ["expires_at"], "request.validation.invalid-expires-at"],
    [{ metadata: "gold" }, ["metadata"], "request.validation.invalid-metadata"],
    [
      { metadata: { ["k".repeat(41)]: "v" } },
      [`metadata.${"k".repeat(41)}`],
      "request.validation.invalid-metadata",
    ],
  ])(
    "refuse a percentage coupon with %j: a 400 naming %j (%s), and make nothing",
    async (change, fields, errorType) => {
      const body = { ...percentOff(), ...change };

      const { status, body: answer } = await local.sandbox.post("/coupons", body);

      expect(status).toBe(400);
      expect(answer.error_type).toBe(errorType);
      expect(answer.invalid_fields.map((field: { name: string }) => field.name)).toEqual(fields);
      if (typeof body.id === "string" && /^[\w.-]{1,100}$/.test(body.id) && body.id !== "..") {
        expect((await local.sandbox.get(`/coupons/${body.id}`)).status).toBe(404);
      }
    },
  );

  it.each([
    [{ amount_off: "0" }, ["amount_off"], "request.validation.invalid-amount-off"],
    [{ amount_off: "-1.00" }, ["amount_off"], "request.validation.invalid-amount-off"],
    [{ amount_off: "5.999" }, ["amount_off"], "request.validation.invalid-amount-off"],
    [{ amount_off: "10.5", currency: "JPY" }, ["amount_off"], "request.validation.invalid-amount-off"],
    [{ amount_off: "five" }, ["amount_off"], "request.validation.invalid-amount-off"],
    [{ currency: undefined }, ["currency"], "request.validation.missing-currency"],
    [{ currency: "" }, ["currency"], "request.validation.missing-currency"],
    [{ currency: "XYZ" }, ["currency"], "request.validation.invalid-currency"],
  ])("refuse an amount coupon with %j: a 400 naming %j (%s)", async (change, fields, errorType) => {
    const { status, body: answer } = await local.sandbox.post("/coupons", amountOff(change));

    expect(status).toBe(400);
    expect(answer.error_type).toBe(errorType);
    expect(answer.invalid_fields.map((field: { name: string }) => field.name)).toEqual(fields);
  });

  it("need expires_at ahead of the environment's own clock, not only of real time", async () => {
    const sandbox = await environment("Coupon expiry clock");
    const live = api(local.url, sandbox.project.live);
    const advanced = await sandbox.client.post("/sandbox/clock", { advance_to: inHours(24 * 10) });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    const tomorrow = inHours(24);

    const refused = await sandbox.client.post("/coupons", percentOff({ expires_at: tomorrow }));
    const later = await sandbox.client.post("/coupons", percentOff({ expires_at: inHours(24 * 11) }));
    const onLive = await live.post("/coupons", percentOff({ expires_at: tomorrow }));

    expect(refused.status).toBe(400);
    expect(refused.body.invalid_fields).toEqual([{ name: "expires_at", message: expect.any(String) }]);
    expect(later.status).toBe(200);
    expect(onLive.status).toBe(200);
    expect(onLive.body.coupon.sandbox).toBe(false);
  });

  it("change their metadata; a PUT without it changes nothing", async () => {
    const { client, projectId } = await environment("Coupon updates");
    const coupon = await created(client, percentOff({ metadata: { a: "1" } }));

    const changed = await client.put(`/coupons/${coupon.id}`, { metadata: { b: "2" } });
    const nothing = await client.put(`/coupons/${coupon.id}`, {});

    expect(changed.status).toBe(200);
    expect(changed.body.coupon).toEqual({ ...coupon, metadata: { b: "2" } });
    expect(nothing.body.coupon).toEqual(changed.body.coupon);
    expect((await client.get(`/coupons/${coupon.id}`)).body.coupon).toEqual(changed.body.coupon);
    expect(await eventsAbout(projectId, coupon.id)).toEqual([
      "coupon.created",
      "coupon.updated",
      "coupon.updated",
    ]);
    expect(await activitiesAbout(client, coupon.id)).toEqual([
      "coupon.created",
      "coupon.updated",
      "coupon.updated",
    ]);
  });

  it.each([
    ["id", "OTHER-ID"],
    ["percent_off", "30"],
    ["amount_off", "5.00"],
    ["currency", "EUR"],
    ["iteration_count", 4],
    ["max_redemptions", "11"],
    ["expires_at", "2099-01-01T00:00:00Z"],
  ])(
    "refuse a PUT that changes %s (to %j) with a 400 naming it, and keep the coupon",
    async (field, value) => {
      const coupon = await created(
        local.sandbox,
        percentOff({ iteration_count: 3, max_redemptions: 10, expires_at: "2098-01-01T00:00:00.000Z" }),
      );

      const refused = await local.sandbox.put(`/coupons/${coupon.id}`, {
        metadata: { x: "y" },
        [field]: value,
      });

      expect(refused.status).toBe(400);
      expect(refused.body.error_type).toBe(`request.validation.invalid-${field.replaceAll("_", "-")}`);
      expect(refused.body.invalid_fields).toEqual([{ name: field, message: expect.any(String) }]);
      expect((await local.sandbox.get(`/coupons/${coupon.id}`)).body.coupon).toEqual(coupon);
    },
  );

  it("accept the whole coupon sent back as read (Python), numbers and times written otherwise included", async () => {
    const { client, raw } = await environment("Coupon echoes");
    const coupon = await created(
      client,
      amountOff({ iteration_count: 3, max_redemptions: 10, expires_at: "2098-01-01T00:00:00.000Z" }),
    );
    await redeem(coupon);

    // As read, `redeemed_number` stale (what the API writes is not the client's to change).
    const echoed = await raw({
      method: "PUT",
      target: `/coupons/${coupon.id}`,
      ...json({ ...coupon, metadata: { echoed: "yes" } }),
    });
    const rewritten = await raw({
      method: "PUT",
      target: `/coupons/${coupon.id}`,
      headers: { "content-type": "application/json" },
      body: `{"id": "${coupon.id}", "amount_off": 5.0, "currency": "eur", "expires_at": "2098-01-01T01:00:00+01:00", "iteration_count": 3, "max_redemptions": 10, "percent_off": null, "metadata": null}`,
    });
    const form = await raw({
      method: "PUT",
      target: `/coupons/${coupon.id}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `id=${coupon.id}&amount_off=5.00&percent_off=&currency=EUR&iteration_count=3&max_redemptions=10&expires_at=&metadata[form]=php`,
    });

    expect(echoed.status, JSON.stringify(echoed.body)).toBe(200);
    expect(echoed.body.coupon).toEqual({ ...coupon, redeemed_number: 1, metadata: { echoed: "yes" } });
    expect(rewritten.status, JSON.stringify(rewritten.body)).toBe(200);
    expect(rewritten.body.coupon.metadata).toEqual({ echoed: "yes" });
    expect(form.status, JSON.stringify(form.body)).toBe(200);
    expect(form.body.coupon).toEqual({ ...coupon, redeemed_number: 1, metadata: { form: "php" } });
  });

  it("end with DELETE: no longer shown, listed, counted, changed or redeemed, and the id stays taken", async () => {
    const { client, projectId, caller } = await environment("Coupon deletion");
    const kept = await created(client, percentOff({ id: "a-kept" }));
    const coupon = await created(client, percentOff({ id: "b-ended" }));
    expect((await client.get("/coupons")).body.total_count).toBe(2);

    const deleted = await client.del(`/coupons/${coupon.id}`);

    expect(deleted).toMatchObject({ status: 200, body: { success: true } });
    expect(deleted.body).toEqual({ success: true });
    for (const attempt of [
      client.get(`/coupons/${coupon.id}`),
      client.put(`/coupons/${coupon.id}`, { metadata: { back: "yes" } }),
      client.del(`/coupons/${coupon.id}`),
    ]) {
      const { status, body } = await attempt;
      expect(status).toBe(404);
      expect(body.error_type).toBe("resource.coupon.not-found");
    }
    const listed = (await client.get("/coupons?limit=100")).body;
    expect(listed.coupons.map((item: { id: string }) => item.id)).toEqual([kept.id]);
    expect(listed.total_count).toBe(1);
    const refused = await refusalOf(redeemableCoupon(await caller(), coupon.id, new Date()));
    expect(refused).toMatchObject({ status: 404, errorType: "resource.coupon.not-found" });
    expect(await redeem(coupon)).toBe("refused");
    expect(await redemptionRefusal(await caller(), coupon.id)).toMatchObject({
      status: 404,
      errorType: "resource.coupon.not-found",
    });
    expect((await client.post("/coupons", percentOff({ id: coupon.id }))).status).toBe(409);
    expect(await eventsAbout(projectId, coupon.id)).toEqual(["coupon.created", "coupon.deleted"]);
    expect(await activitiesAbout(client, coupon.id)).toEqual(["coupon.created", "coupon.deleted"]);
  });

  it("list with the envelope, total_count and coupon-id cursors, in id order", async () => {
    const { client } = await environment("Coupon listing");
    expect((await client.get("/coupons")).body).toMatchObject({
      success: true,
      coupons: [],
      count: 0,
      has_more: false,
      total_count: 0,
    });
    for (const id of ["c-coupon", "a-coupon", "b-coupon"]) await created(client, percentOff({ id }));

    const first = await client.get("/coupons?limit=2&order=asc");
    const next = await client.get("/coupons?limit=2&order=asc&start_after=b-coupon");
    const before = await client.get("/coupons?limit=2&order=asc&end_before=c-coupon");
    const newestFirst = await client.get("/coupons");

    const ids = (answer: { body: { coupons: { id: string }[] } }) =>
      answer.body.coupons.map((item) => item.id);
    expect(first.body).toMatchObject({ count: 2, has_more: true, total_count: 3, limit: 2, order: "asc" });
    expect(ids(first)).toEqual(["a-coupon", "b-coupon"]);
    expect(ids(next)).toEqual(["c-coupon"]);
    expect(next.body.has_more).toBe(false);
    expect(ids(before)).toEqual(["a-coupon", "b-coupon"]);
    expect(ids(newestFirst)).toEqual(["c-coupon", "b-coupon", "a-coupon"]);
    const badCursor = await client.get("/coupons?start_after=bad/id");
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.invalid_fields).toEqual([{ name: "start_after", message: expect.any(String) }]);
    expect((await client.get("/coupons?filter=active")).status).toBe(400);
  });

  it("are not seen, changed, ended or redeemed from another environment or project", async () => {
    const coupon = await created(local.sandbox, percentOff());
    const other = await environment("Other coupons");
    const { project_id: liveId, private_key: liveKey } = local.project.live;
    const liveCaller = await authenticate(basicAuthorization(liveId, liveKey), "private-key");

    for (const stranger of [local.live, other.client]) {
      for (const attempt of [
        stranger.get(`/coupons/${coupon.id}`),
        stranger.put(`/coupons/${coupon.id}`, { metadata: { mine: "yes" } }),
        stranger.del(`/coupons/${coupon.id}`),
      ]) {
        const { status, body } = await attempt;
        expect(status).toBe(404);
        expect(body.error_type).toBe("resource.coupon.not-found");
      }
      const listed = (await stranger.get("/coupons?limit=100")).body.coupons;
      expect(listed.map((item: { id: string }) => item.id)).not.toContain(coupon.id);
    }
    for (const caller of [liveCaller, await other.caller()]) {
      const refused = await refusalOf(redeemableCoupon(caller, coupon.id, new Date()));
      expect(refused.errorType).toBe("resource.coupon.not-found");
    }
    // The same id is free in another environment, and is another coupon there.
    const mirrored = await local.live.post("/coupons", {
      ...percentOff({ id: coupon.id }),
      percent_off: "50",
    });
    expect(mirrored.status).toBe(200);
    expect(mirrored.body.coupon).toMatchObject({ sandbox: false, percent_off: "50" });
    expect((await local.sandbox.get(`/coupons/${coupon.id}`)).body.coupon).toEqual(coupon);
  });

  it("answer an unknown id and a malformed one with a 404", async () => {
    for (const id of ["never-made", "x".repeat(101), "bad%20id"]) {
      const { status, body } = await local.sandbox.get(`/coupons/${id}`);
      expect(status, id).toBe(404);
      expect(body.error_type).toBe("resource.coupon.not-found");
    }
  });

  it("honour an Idempotency-Key: the same key makes one coupon and replays it", async () => {
    const { client } = await environment("Coupon keys");
    const body = percentOff();
    const key = crypto.randomUUID();

    const first = await client.post("/coupons", body, { idempotencyKey: key });
    const again = await client.post("/coupons", body, { idempotencyKey: key });
    const other = await client.post("/coupons", { ...body, percent_off: "30" }, { idempotencyKey: key });

    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(other.status).toBe(400);
    expect(other.body.error_type).toBe("request.idempotency-key.invalid");
    expect((await client.get("/coupons")).body.total_count).toBe(1);
  });
});

describe("the official clients' calls", () => {
  it("create with null for every unset key (Python), with them omitted (Node), and as a form (PHP)", async () => {
    const { raw } = await environment("Coupon clients");
    const python = await raw({
      method: "POST",
      target: "/coupons",
      ...json({
        id: couponId(),
        amount_off: null,
        percent_off: 20,
        currency: null,
        iteration_count: null,
        max_redemptions: null,
        expires_at: null,
        metadata: null,
      }),
    });
    const node = await raw({
      method: "POST",
      target: "/coupons",
      ...json({ id: couponId(), percent_off: "20" }),
    });
    const php = await raw({
      method: "POST",
      target: "/coupons",
      ...form(
        `id=${couponId()}&amount_off=4.50&percent_off=&currency=usd&iteration_count=2&max_redemptions=&expires_at=&metadata%5Bsource%5D=php`,
      ),
    });

    for (const answer of [python, node]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.coupon).toMatchObject({
        percent_off: "20",
        amount_off: null,
        currency: null,
        iteration_count: null,
        max_redemptions: null,
        expires_at: null,
        metadata: {},
      });
    }
    expect(php.status, JSON.stringify(php.body)).toBe(200);
    expect(php.body.coupon).toMatchObject({
      amount_off: "4.50",
      currency: "USD",
      percent_off: null,
      iteration_count: 2,
      max_redemptions: null,
      expires_at: null,
      metadata: { source: "php" },
    });
  });

  it("list, read and delete with the listing parameters, the literal null and Python's None", async () => {
    const { client, raw } = await environment("Coupon client queries");
    const coupon = await created(client, percentOff());

    for (const target of [
      "/coupons?filter=&limit=0&end_before=&start_after=",
      "/coupons?expand=None&filter=None&limit=None&end_before=None&start_after=None",
      "/coupons?limit=null&order=null&start_after=null&end_before",
    ]) {
      const { status, body } = await raw({ method: "GET", target });
      expect(status, `${target}: ${JSON.stringify(body)}`).toBe(200);
      expect(body).toMatchObject({ success: true, total_count: 1, coupons: [coupon] });
    }
    const read = await raw({ method: "GET", target: `/coupons/${coupon.id}?expand=None&filter=&limit=0` });
    expect(read.body).toEqual({ success: true, coupon });
    const deleted = await raw({
      method: "DELETE",
      target: `/coupons/${coupon.id}?expand=None`,
      ...json({ expand: null }),
    });
    expect(deleted).toEqual({ status: 200, body: { success: true } });
  });
});

describe("redemptions (the API of subscriptions' discounts)", () => {
  it("count one redemption per write, in redeemed_number", async () => {
    const { client, caller } = await environment("Coupon redemptions");
    const coupon = await created(client, percentOff({ max_redemptions: 5 }));

    const redeemable = await redeemableCoupon(await caller(), coupon.id, new Date());
    expect(redeemable).toMatchObject({ id: coupon.id, redeemed_number: 0, ended_at: null });
    expect(await redeem(redeemable)).toBe("redeemed");
    expect(await redeem(redeemable)).toBe("redeemed");

    expect((await client.get(`/coupons/${coupon.id}`)).body.coupon.redeemed_number).toBe(2);
    expect((await redeemableCoupon(await caller(), coupon.id, new Date())).redeemed_number).toBe(2);
  });

  it("refuse a coupon redeemed max_redemptions times: exhausted, naming coupon_id", async () => {
    const { client, caller } = await environment("Coupon exhausted");
    const coupon = await created(client, percentOff({ max_redemptions: 1 }));
    expect(await redeem(coupon)).toBe("redeemed");

    const early = await refusalOf(redeemableCoupon(await caller(), coupon.id, new Date()));
    const written = await redeem(coupon);
    const late = await redemptionRefusal(await caller(), coupon.id);

    for (const refusal of [early, late]) {
      expect(refusal).toMatchObject({ status: 400, errorType: "request.coupon.exhausted" });
      expect(refusal.invalidFields).toEqual([{ name: "coupon_id", message: expect.any(String) }]);
    }
    expect(written).toBe("refused");
    expect((await client.get(`/coupons/${coupon.id}`)).body.coupon.redeemed_number).toBe(1);
  });

  it("refuse a coupon from its expires_at on, on the environment's clock: expired, naming coupon_id", async () => {
    const { client, caller } = await environment("Coupon expired");
    const expiresAt = inHours(2);
    const coupon = await created(client, percentOff({ expires_at: expiresAt }));
    const after = new Date(Date.parse(expiresAt) + 1);

    const early = await refusalOf(redeemableCoupon(await caller(), coupon.id, after));
    const atExpiry = await refusalOf(redeemableCoupon(await caller(), coupon.id, new Date(expiresAt)));
    const written = await redeem(coupon, after);
    // The environment's clock still reads before expiry: the write's time is what refused it.
    const late = await redemptionRefusal(await caller(), coupon.id);
    expect(await redeem(coupon, new Date(Date.parse(expiresAt) - 1))).toBe("redeemed");
    await client.post("/sandbox/clock", { advance_to: inHours(3) });
    const onTheClock = await refusalOf(redeemableCoupon(await caller(), coupon.id, new Date(inHours(3))));
    const afterClock = await redemptionRefusal(await caller(), coupon.id);

    for (const refusal of [early, atExpiry, late, onTheClock, afterClock]) {
      expect(refusal).toMatchObject({ status: 400, errorType: "request.coupon.expired" });
      expect(refusal.invalidFields).toEqual([{ name: "coupon_id", message: expect.any(String) }]);
    }
    expect(written).toBe("refused");
    expect((await client.get(`/coupons/${coupon.id}`)).body.coupon.redeemed_number).toBe(1);
  });

  it("answer an unknown or malformed coupon id with a 404", async () => {
    const { caller } = await environment("Coupon unknown");
    for (const id of ["never-made", "bad/id", ""]) {
      expect(await refusalOf(redeemableCoupon(await caller(), id, new Date()))).toMatchObject({
        status: 404,
        errorType: "resource.coupon.not-found",
      });
      expect(await redemptionRefusal(await caller(), id)).toMatchObject({ status: 404 });
    }
  });

  it("count exactly max_redemptions of 10 concurrent redemptions and refuse the 7 others", async () => {
    const { client, caller } = await environment("Coupon redemption race");
    const coupon = await created(client, percentOff({ max_redemptions: 3 }));
    const read = await redeemableCoupon(await caller(), coupon.id, new Date());

    const outcomes = await Promise.all(Array.from({ length: 10 }, () => redeem(read)));

    expect(outcomes.filter((outcome) => outcome === "redeemed")).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome === "refused")).toHaveLength(7);
    expect((await client.get(`/coupons/${coupon.id}`)).body.coupon.redeemed_number).toBe(3);
    expect((await redemptionRefusal(await caller(), coupon.id)).errorType).toBe("request.coupon.exhausted");
  });

  it("never lose a count to a PUT that read the coupon before redemptions: the PUT is made again", async () => {
    const { client, caller, projectId } = await environment("Coupon PUT race");
    const coupon = await created(client, percentOff());
    const hold = holdItemReads(keys.coupon(projectId, coupon.id), 1);

    const putting = client.put(`/coupons/${coupon.id}`, { metadata: { during: "redemptions" } });
    await hold.reads(1);
    // Counted after the PUT read the coupon, before it wrote it.
    const outcomes = await Promise.all(Array.from({ length: 3 }, () => redeem(coupon)));
    hold.release();
    const put = await putting;

    expect(outcomes).toEqual(["redeemed", "redeemed", "redeemed"]);
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.coupon).toMatchObject({ redeemed_number: 3, metadata: { during: "redemptions" } });
    vi.restoreAllMocks();
    const stored = (await redeemableCoupon(await caller(), coupon.id, new Date())) as Coupon;
    expect(stored).toMatchObject({ redeemed_number: 3, metadata: { during: "redemptions" } });
  });

  it("never lose a count to PUTs racing redemptions freely", async () => {
    const { client } = await environment("Coupon free race");
    const coupon = await created(client, percentOff({ max_redemptions: 15 }));

    const [redemptions, puts] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => redeem(coupon))),
      Promise.all(
        Array.from({ length: 5 }, (_, index) =>
          client.put(`/coupons/${coupon.id}`, { metadata: { put: String(index) } }),
        ),
      ),
    ]);

    expect(redemptions.filter((outcome) => outcome === "redeemed")).toHaveLength(15);
    for (const put of puts) {
      if (put.status !== 200) expect(put.body.error_type).toBe("request.coupon.concurrent-update");
    }
    const stored = (await client.get(`/coupons/${coupon.id}`)).body.coupon;
    expect(stored.redeemed_number).toBe(15);
    const written = puts.filter((put) => put.status === 200).map((put) => put.body.coupon.metadata.put);
    expect(written).toContain(stored.metadata.put);
  });
});
