import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";
import { basicAuthorization, sendRaw } from "../support/raw-http.ts";

/**
 * Issue 21: supervised projects (a platform's sub-merchants) and `DELETE /projects/{id}`, as the
 * Python and PHP clients call them.
 */
const local = useInProcessApi("Supervised projects test");
const DAY = 24 * 3600 * 1000;

async function supervisor(environment: "sandbox" | "live" = "sandbox") {
  const project = await createProject("Platform");
  const credentials = project[environment];
  return { client: api(local.url, credentials), scope: credentials.project_id, project };
}

/** The Python client's body: every key it knows, null when unset. */
const pythonBody = (fields: Record<string, unknown>) => ({
  id: null,
  name: null,
  default_currency: null,
  dunning_configuration: null,
  applepay_settings: null,
  public_metadata: null,
  ...fields,
});

async function child(client: Client, fields: Record<string, unknown>) {
  const made = await client.post("/supervised-projects", pythonBody(fields));
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  return made.body.project;
}

describe("supervised projects", () => {
  it("show a child's keys once: the answer kept for an Idempotency-Key holds none, and its replay answers them as null", async () => {
    const platform = await supervisor("live");
    const body = pythonBody({ name: "Kiosk" });
    const made = await platform.client.post("/supervised-projects", body, { idempotencyKey: "kiosk-1" });
    expect(made.status).toBe(200);
    const { private_key: liveKey, sandbox_project: sandbox } = made.body.project;
    expect(liveKey).toMatch(/^key_live_/);
    expect(sandbox.private_key).toMatch(/^key_sandbox_/);

    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: config.tableName,
        Key: keys.idempotency(platform.scope, "private-key", "kiosk-1"),
      }),
    );
    expect(Item).toBeDefined();
    expect(JSON.stringify(Item)).not.toContain(liveKey);
    expect(JSON.stringify(Item)).not.toContain(sandbox.private_key);

    const replayed = await platform.client.post("/supervised-projects", body, { idempotencyKey: "kiosk-1" });
    expect(replayed.status).toBe(200);
    expect(replayed.body.project).toMatchObject({ id: made.body.project.id, private_key: null });
    expect(replayed.body.project.sandbox_project).toMatchObject({ id: sandbox.id, private_key: null });
    // The keys shown once still open their environments.
    expect(
      (await api(local.url, { project_id: made.body.project.id, private_key: liveKey }).get("/customers"))
        .status,
    ).toBe(200);
  });

  it("are made by a sandbox supervisor as sandbox-only projects with their own key, listed without it", async () => {
    const platform = await supervisor();
    const made = await child(platform.client, { name: "Corner bakery", default_currency: "eur" });
    expect(made).toEqual({
      id: expect.stringMatching(/^test-proj_/),
      supervisor_project_id: platform.scope,
      api_version: null,
      name: "Corner bakery",
      logo_url: null,
      email: null,
      default_currency: "EUR",
      private_key: expect.stringMatching(/^key_sandbox_|^key_test_|^test_|^sk_/),
      dunning_configuration: null,
      applepay_settings: null,
      public_metadata: {},
      sandbox: true,
      created_at: expect.any(String),
    });
    expect(made).not.toHaveProperty("sandbox_project");

    const own = api(local.url, { project_id: made.id, private_key: made.private_key });
    expect((await own.get("/customers")).status).toBe(200);
    // The supervisor's key opens none of the child's data unless it allows it (below), and the child
    // has no live environment.
    const borrowed = api(local.url, {
      project_id: made.id,
      private_key: platform.project.sandbox.private_key,
    });
    expect((await borrowed.get("/customers")).status).toBe(401);
    const live = api(local.url, { project_id: made.id.replace(/^test-/, ""), private_key: made.private_key });
    expect((await live.get("/customers")).status).toBe(401);

    const second = await child(platform.client, { name: "Flower shop" });
    const listed = await platform.client.get("/supervised-projects?end_before=None&limit=None");
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body).toMatchObject({ success: true, count: 2, total_count: 2 });
    expect(listed.body.projects.map((project: { id: string }) => project.id)).toEqual([second.id, made.id]);
    expect(listed.body.projects[1]).toEqual({ ...made, private_key: null });
    // Its own list is empty: supervision goes one way.
    expect((await own.get("/supervised-projects")).body).toMatchObject({ projects: [], total_count: 0 });
    const logged = (await platform.client.get("/activities")).body.activities;
    expect(logged.map((activity: { type: string }) => activity.type)).toEqual([
      "supervised_project.created",
      "supervised_project.created",
    ]);
  });

  it("let their supervisor read their data with its own key only once they allow it, and never change anything", async () => {
    const platform = await supervisor();
    const made = await child(platform.client, { name: "Bakery" });
    const own = api(local.url, { project_id: made.id, private_key: made.private_key });
    const customer = (await own.post("/customers", { first_name: "Ada" })).body.customer;
    const asSupervisor = api(local.url, {
      project_id: made.id,
      private_key: platform.project.sandbox.private_key,
    });
    expect((await asSupervisor.get(`/customers/${customer.id}`)).status).toBe(401);

    const allowed = await own.put(`/projects/${made.id}`, { supervisor_access: "read" });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(allowed.body.project).toMatchObject({
      supervisor_project_id: platform.scope,
      supervisor_access: "read",
    });
    expect((await asSupervisor.get(`/customers/${customer.id}`)).body.customer).toMatchObject({
      first_name: "Ada",
    });
    const written = await asSupervisor.post("/customers", { first_name: "Eve" });
    expect(written.status).toBe(403);
    expect(written.body.error_type).toBe("request.authentication.supervisor-read-only");
    expect((await asSupervisor.put(`/projects/${made.id}`, { supervisor_access: "read" })).status).toBe(403);
    // Another project's key, or the supervisor's live key, is still refused.
    const stranger = await createProject("Stranger");
    expect(
      (
        await api(local.url, { project_id: made.id, private_key: stranger.sandbox.private_key }).get(
          "/customers",
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await api(local.url, { project_id: made.id, private_key: platform.project.live.private_key }).get(
          "/customers",
        )
      ).status,
    ).toBe(401);

    expect((await own.put(`/projects/${made.id}`, { supervisor_access: "none" })).status).toBe(200);
    expect((await asSupervisor.get(`/customers/${customer.id}`)).status).toBe(401);
    expect(
      (await own.get("/activities")).body.activities.map((activity: { title: string }) => activity.title),
    ).toEqual(["Supervisor's read access taken back", "Supervisor allowed to read this project's data"]);
    // A project nobody supervises has no supervisor to allow.
    const refused = await platform.client.put(`/projects/${platform.scope}`, { supervisor_access: "read" });
    expect(refused.status).toBe(400);
    expect(refused.body.invalid_fields).toEqual([expect.objectContaining({ name: "supervisor_access" })]);
  });

  it("are made by a live supervisor with both environments, each with its key", async () => {
    const platform = await supervisor("live");
    const made = await child(platform.client, { name: "Live shop" });
    expect(made).toMatchObject({
      id: expect.stringMatching(/^proj_/),
      sandbox: false,
      supervisor_project_id: platform.scope,
    });
    expect(made.sandbox_project).toMatchObject({
      id: `test-${made.id}`,
      sandbox: true,
      supervisor_project_id: `test-${platform.scope}`,
      private_key: expect.any(String),
    });
    for (const [id, key] of [
      [made.id, made.private_key],
      [made.sandbox_project.id, made.sandbox_project.private_key],
    ]) {
      expect((await api(local.url, { project_id: id, private_key: key }).get("/customers")).status).toBe(200);
    }
  });

  it("refuse a chosen id and a dunning configuration that cannot run, naming the field, and create nothing", async () => {
    const platform = await supervisor();
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "A", id: "proj_mine" }, "id"],
      [{ name: "" }, "name"],
      [{ name: "A", default_currency: "EURO" }, "default_currency"],
      [
        { name: "A", dunning_configuration: [{ action: "cancel" }, { action: "retry", delay_in_days: 1 }] },
        "dunning_configuration[0].action",
      ],
      [
        {
          name: "A",
          dunning_configuration: [
            { action: "retry", delay_in_days: 3 },
            { action: "retry", delay_in_days: 2 },
          ],
        },
        "dunning_configuration[1].delay_in_days",
      ],
      [{ name: "A", dunning_configuration: [{ action: "retry" }] }, "dunning_configuration[0].delay_in_days"],
      [
        { name: "A", dunning_configuration: [{ action: "retry", delay_in_days: 500 }] },
        "dunning_configuration[0].delay_in_days",
      ],
    ];
    for (const [fields, field] of cases) {
      const refused = await platform.client.post("/supervised-projects", pythonBody(fields));
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.invalid_fields.map((found: { name: string }) => found.name)).toContain(field);
    }
    expect((await platform.client.get("/supervised-projects")).body.total_count).toBe(0);
  });

  it("retry their subscriptions' declined renewals on the child's own dunning days", async () => {
    const platform = await supervisor();
    const made = await child(platform.client, {
      name: "Gym",
      dunning_configuration: [
        { action: "retry", delay_in_days: 2 },
        { action: "retry", delay_in_days: 5 },
        { action: "cancel" },
      ],
    });
    const client = api(local.url, { project_id: made.id, private_key: made.private_key });
    const customer = (await client.post("/customers", { first_name: "Ada" })).body.customer;
    // Its first payment goes through; every later one is declined (card.no-money).
    const card = (await client.post("/cards", { number: "4000000000006009", exp_month: 12, exp_year: 2099 }))
      .body.card;
    const created = await client.post("/subscriptions", {
      customer_id: customer.id,
      name: "Monthly",
      amount: "5.00",
      currency: "EUR",
      interval: "1m",
      source: card.id,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.subscription.id;
    const due = Date.parse((await client.get(`/subscriptions/${id}`)).body.subscription.iterate_at);
    const advanceTo = async (at: number) =>
      expect((await client.post("/sandbox/clock", { advance_to: new Date(at).toISOString() })).status).toBe(
        200,
      );
    await advanceTo(due + 1000);
    expect((await client.get(`/subscriptions/${id}`)).body.subscription.next_retry_at).toBe(
      new Date(due + 2 * DAY).toISOString(),
    );
    await advanceTo(due + 2 * DAY + 1000);
    expect((await client.get(`/subscriptions/${id}`)).body.subscription.next_retry_at).toBe(
      new Date(due + 5 * DAY).toISOString(),
    );
    await advanceTo(due + 5 * DAY + 1000);
    expect((await client.get(`/subscriptions/${id}`)).body.subscription).toMatchObject({
      canceled: true,
      cancellation_reason: "payment-failed",
    });
  });
});

describe("DELETE /projects/{project_id}", () => {
  const raw = async (credentials: { project_id: string; private_key: string }, target: string) => {
    const answer = await sendRaw(local.url, {
      method: "DELETE",
      target,
      headers: {
        authorization: basicAuthorization(credentials.project_id, credentials.private_key),
        accept: "*/*",
      },
    });
    // biome-ignore lint/suspicious/noExplicitAny: answers are asserted on
    return { status: answer.status, body: JSON.parse(answer.text) as any };
  };

  it("answers the clients' placeholder path and any other project's id 404, and deletes nothing", async () => {
    const { project } = await supervisor();
    const other = await createProject("Someone else");
    for (const target of [
      "/projects/%7Bproject_id%7D",
      "/projects/{project_id}",
      `/projects/${other.sandbox.project_id}`,
      `/projects/${project.live.project_id}`,
    ]) {
      const answer = await raw(project.sandbox, target);
      expect(answer.status, target).toBe(404);
      expect(answer.body.error_type).toBe("resource.project.not-found");
    }
    expect((await api(local.url, other.sandbox).get("/customers")).status).toBe(200);
    expect((await api(local.url, project.sandbox).get("/customers")).status).toBe(200);
  });

  it("deletes the caller's sandbox alone: its key is refused from then on, live goes on", async () => {
    const { project } = await supervisor();
    const deleted = await raw(project.sandbox, `/projects/${project.sandbox.project_id}`);
    expect(deleted).toEqual({ status: 200, body: { success: true } });
    expect((await api(local.url, project.sandbox).get("/customers")).status).toBe(401);
    expect((await api(local.url, project.live).get("/customers")).status).toBe(200);
  });

  it("deletes a live project with its sandbox", async () => {
    const { project } = await supervisor("live");
    expect((await raw(project.live, `/projects/${project.live.project_id}`)).status).toBe(200);
    expect((await api(local.url, project.live).get("/customers")).status).toBe(401);
    expect((await api(local.url, project.sandbox).get("/customers")).status).toBe(401);
  });

  it("lets a supervisor delete its child, which leaves its list", async () => {
    const platform = await supervisor();
    const made = await child(platform.client, { name: "Closing down" });
    expect((await platform.client.del(`/projects/${made.id}`)).status).toBe(200);
    expect(
      (await api(local.url, { project_id: made.id, private_key: made.private_key }).get("/customers")).status,
    ).toBe(401);
    expect((await platform.client.get("/supervised-projects")).body).toMatchObject({
      projects: [],
      total_count: 0,
    });
    expect((await platform.client.del(`/projects/${made.id}`)).status).toBe(404);
    // A child cannot delete its supervisor.
    const sibling = await child(platform.client, { name: "Sibling" });
    const own = api(local.url, { project_id: sibling.id, private_key: sibling.private_key });
    expect((await own.del(`/projects/${platform.scope}`)).status).toBe(404);
  });
});
