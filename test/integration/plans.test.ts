import { describe, expect, it } from "vitest";
import { createProject } from "../../shared/projects/project.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";
import { recordedEvents } from "../support/events.ts";

const local = useInProcessApi("Plans test");
const client = local.sandbox;
const planId = () => `gold-${crypto.randomUUID().slice(0, 8)}`;

const monthly = (id = planId()) => ({ id, name: "Gold", amount: "9.99", currency: "EUR", interval: "1m" });

describe("plans", () => {
  it("are created under the merchant's id with the reference's fields, and read back", async () => {
    const body = {
      ...monthly(),
      trial_period: "7d",
      metadata: { tier: "gold" },
      return_url: "https://shop.example.com/ok",
    };
    const created = await client.post("/plans", body);
    expect(created.status).toBe(200);
    expect(created.body.plan).toEqual({
      id: body.id,
      project_id: local.project.sandbox.project_id,
      name: "Gold",
      amount: "9.99",
      currency: "EUR",
      interval: "1m",
      trial_period: "7d",
      metadata: { tier: "gold" },
      return_url: "https://shop.example.com/ok",
      cancel_url: null,
      sandbox: true,
      created_at: expect.any(String),
    });
    expect((await client.get(`/plans/${body.id}`)).body.plan).toEqual(created.body.plan);
    const events = await recordedEvents(local.project.sandbox.project_id);
    expect(
      events.some(
        (event) =>
          event.name === "plan.created" && (event.data as { plan: { id: string } }).plan.id === body.id,
      ),
    ).toBe(true);
  });

  it("refuse a duplicate id with a 409 and change nothing", async () => {
    const first = monthly();
    await client.post("/plans", first);
    const duplicate = await client.post("/plans", { ...first, name: "Other", amount: "1.00" });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error_type).toBe("request.plan.duplicate");
    expect((await client.get(`/plans/${first.id}`)).body.plan).toMatchObject({
      name: "Gold",
      amount: "9.99",
    });
  });

  it.each([
    [{ id: "" }, "id"],
    [{ id: "bad id/with slash" }, "id"],
    [{ id: "x".repeat(101) }, "id"],
    [{ id: ".." }, "id"],
    [{ name: undefined }, "name"],
    [{ amount: "0" }, "amount"],
    [{ amount: "9.999" }, "amount"],
    [{ amount: "-1" }, "amount"],
    [{ currency: "XYZ" }, "currency"],
    [{ interval: "monthly" }, "interval"],
    [{ interval: "1m1m" }, "interval"],
    [{ interval: "0d" }, "interval"],
    [{ trial_period: "7" }, "trial_period"],
    [{ return_url: "not a url" }, "return_url"],
  ])("refuse %j with a 400 naming %s", async (change, field) => {
    const body = { ...monthly(), ...change };
    const { status, body: answer } = await client.post("/plans", body);
    expect(status).toBe(400);
    expect(answer.invalid_fields.map((item: { name: string }) => item.name)).toContain(field);
  });

  it("change name, trial and metadata, accept the terms echoed, refuse changed terms", async () => {
    const plan = monthly();
    await client.post("/plans", plan);
    const changed = await client.put(`/plans/${plan.id}`, { ...plan, name: "Platinum", trial_period: "14d" });
    expect(changed.status).toBe(200);
    expect(changed.body.plan).toMatchObject({ name: "Platinum", trial_period: "14d", amount: "9.99" });
    const cleared = await client.put(`/plans/${plan.id}`, { trial_period: "" });
    expect(cleared.body.plan.trial_period).toBeNull();
    for (const [field, value] of [
      ["amount", "19.99"],
      ["currency", "USD"],
      ["interval", "1y"],
    ]) {
      const refused = await client.put(`/plans/${plan.id}`, { [field as string]: value });
      expect(refused.status, field).toBe(400);
      expect(refused.body.invalid_fields, field).toEqual([{ name: field, message: expect.any(String) }]);
    }
  });

  it("end with DELETE: no longer shown, listed or changed, and the id stays taken", async () => {
    const plan = monthly();
    await client.post("/plans", plan);
    expect((await client.del(`/plans/${plan.id}`)).body).toEqual({ success: true });
    expect((await client.get(`/plans/${plan.id}`)).status).toBe(404);
    expect((await client.put(`/plans/${plan.id}`, { name: "x" })).status).toBe(404);
    expect((await client.del(`/plans/${plan.id}`)).status).toBe(404);
    const listed = (await client.get("/plans?limit=100")).body.plans.map((item: { id: string }) => item.id);
    expect(listed).not.toContain(plan.id);
    expect((await client.post("/plans", plan)).status).toBe(409);
  });

  it("list with the envelope and plan-id cursors", async () => {
    const environment = api(local.url, (await createProject("Plans listing")).sandbox);
    for (const id of ["a-plan", "b-plan", "c-plan"])
      expect((await environment.post("/plans", monthly(id))).status).toBe(200);
    const first = await environment.get("/plans?limit=2&order=asc");
    expect(first.body).toMatchObject({ count: 2, has_more: true, total_count: 3, limit: 2, order: "asc" });
    expect(first.body.plans.map((plan: { id: string }) => plan.id)).toEqual(["a-plan", "b-plan"]);
    const next = await environment.get("/plans?limit=2&order=asc&start_after=b-plan");
    expect(next.body.plans.map((plan: { id: string }) => plan.id)).toEqual(["c-plan"]);
    expect((await environment.get("/plans?start_after=bad/id")).status).toBe(400);
  });

  it("are not seen, changed or ended from another environment or project", async () => {
    const plan = monthly();
    await client.post("/plans", plan);
    const other = api(local.url, (await createProject("Other plans")).sandbox);
    for (const stranger of [local.live, other]) {
      expect((await stranger.get(`/plans/${plan.id}`)).status).toBe(404);
      expect((await stranger.put(`/plans/${plan.id}`, { name: "mine" })).status).toBe(404);
      expect((await stranger.del(`/plans/${plan.id}`)).status).toBe(404);
      // The same id is free in another environment.
      expect((await stranger.post("/plans", plan)).status).toBe(200);
    }
    expect((await client.get(`/plans/${plan.id}`)).body.plan.name).toBe("Gold");
  });
});
