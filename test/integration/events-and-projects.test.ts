import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it } from "vitest";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { createProject } from "../../shared/projects/project.ts";
import { SANDBOX_PRIVATE_NETWORK_VARIABLE } from "../../shared/webhooks/settings.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";

/**
 * The API side of events and webhooks, without the background work: events as resources, and the
 * project settings webhooks use. (Delivery itself: webhooks.test.ts.)
 */
const local = useInProcessApi("Events and projects test");

afterEach(() => {
  delete process.env[SANDBOX_PRIVATE_NETWORK_VARIABLE];
});

async function freshProject() {
  const project = await createProject("Events and projects");
  return { project, sandbox: api(local.url, project.sandbox), live: api(local.url, project.live) };
}

const projectPath = (client: { project_id: string }) => `/projects/${client.project_id}`;

describe("GET /events and GET /events/{id}", () => {
  it("lists an environment's events newest first, with the listing envelope, and pages through them", async () => {
    const { sandbox } = await freshProject();
    const customers: string[] = [];
    for (const name of ["Ada", "Grace", "Edsger"]) {
      customers.push((await sandbox.post("/customers", { first_name: name })).body.customer.id);
    }
    const { status, body } = await sandbox.get("/events");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      success: true,
      count: 3,
      has_more: false,
      total_count: 3,
      limit: 10,
      order: "desc",
    });
    expect(
      body.events.map((event: { data: { customer: { id: string } } }) => event.data.customer.id),
    ).toEqual([...customers].reverse());

    const first = await sandbox.get("/events?limit=1&order=asc");
    expect(first.body).toMatchObject({ count: 1, has_more: true, total_count: 3 });
    const second = await sandbox.get(`/events?limit=1&order=asc&start_after=${first.body.events[0].id}`);
    expect(second.body.events[0].data.customer.id).toBe(customers[1]);
  });

  it("gives an event with its name, sandbox flag, data and firing time", async () => {
    const { sandbox } = await freshProject();
    const customer = (await sandbox.post("/customers", { first_name: "Ada" })).body.customer;
    const [listed] = (await sandbox.get("/events")).body.events;
    const { status, body } = await sandbox.get(`/events/${listed.id}`);
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      event: {
        id: expect.stringMatching(/^ev_[0-9A-Z]{26}$/),
        project_id: customer.project_id,
        name: "customer.created",
        data: { customer },
        sandbox: true,
        fired_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
    });
    expect(body.event).toEqual(listed);
  });

  it("answers 404 resource.event.not-found for an unknown id, a malformed one, or another environment's event", async () => {
    const { sandbox, live } = await freshProject();
    await live.post("/customers", {});
    const [liveEvent] = (await live.get("/events")).body.events;
    for (const id of ["ev_01J00000000000000000000000", "not-an-event", liveEvent.id]) {
      for (const path of [`/events/${id}`, `/events/${id}/webhooks`]) {
        const { status, body } = await sandbox.get(path);
        expect(status, path).toBe(404);
        expect(body.error_type, path).toBe("resource.event.not-found");
      }
    }
  });

  it("lists no webhook for an event of an environment without a webhook URL", async () => {
    const { sandbox } = await freshProject();
    await sandbox.post("/customers", {});
    const [event] = (await sandbox.get("/events")).body.events;
    expect((await sandbox.get(`/events/${event.id}/webhooks`)).body).toEqual({
      success: true,
      webhooks: [],
      deliveries: [],
    });
  });
});

describe("GET /projects/{id}", () => {
  it("shows the caller's environment with its webhook URL and signing secret, each environment its own", async () => {
    const { project, sandbox, live } = await freshProject();
    const sandboxProject = (await sandbox.get(projectPath(project.sandbox))).body.project;
    const liveProject = (await live.get(projectPath(project.live))).body.project;
    expect(sandboxProject).toEqual({
      id: project.sandbox.project_id,
      name: "Events and projects",
      sandbox: true,
      created_at: expect.any(String),
      webhook_url: null,
      webhook_signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    expect(liveProject).toMatchObject({ id: project.live.project_id, sandbox: false, webhook_url: null });
    expect(liveProject.webhook_signing_secret).not.toBe(sandboxProject.webhook_signing_secret);
  });

  it("answers 404 resource.project.not-found for any other id, the other environment's included", async () => {
    const { project, sandbox } = await freshProject();
    const other = await createProject("Someone else");
    for (const id of [project.live.project_id, other.sandbox.project_id, "proj_nope"]) {
      for (const send of [() => sandbox.get(`/projects/${id}`), () => sandbox.put(`/projects/${id}`, {})]) {
        const { status, body } = await send();
        expect(status, id).toBe(404);
        expect(body.error_type, id).toBe("resource.project.not-found");
      }
    }
  });

  it("gives an environment created before signing secrets one secret on first need, the same to concurrent readers", async () => {
    const { project, sandbox } = await freshProject();
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.project(project.sandbox.project_id),
        UpdateExpression: "REMOVE webhook_signing_secret",
      }),
    );
    const read = async () =>
      (await sandbox.get(projectPath(project.sandbox))).body.project.webhook_signing_secret;
    const secrets = await Promise.all([read(), read(), read(), read(), read()]);
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]).toMatch(/^whsec_/);
    expect(await read()).toBe(secrets[0]);
  });
});

describe("PUT /projects/{id}", () => {
  const setUrl = (client: Client, id: string, webhookUrl: unknown) =>
    client.put(`/projects/${id}`, { webhook_url: webhookUrl });

  it("sets the webhook URL (JSON or form), keeps it when absent or null, and removes it when empty", async () => {
    process.env[SANDBOX_PRIVATE_NETWORK_VARIABLE] = "allow";
    const { project, sandbox } = await freshProject();
    const id = project.sandbox.project_id;
    const set = await setUrl(sandbox, id, "http://127.0.0.1:9000/hooks");
    expect(set.status).toBe(200);
    expect(set.body.project).toMatchObject({ id, webhook_url: "http://127.0.0.1:9000/hooks" });
    const secret = set.body.project.webhook_signing_secret;

    const form = await sandbox.put(`/projects/${id}`, "webhook_url=http%3A%2F%2Flocalhost%3A9001%2Fh", {
      form: true,
    });
    expect(form.body.project.webhook_url).toBe("http://localhost:9001/h");
    for (const body of [{}, { webhook_url: null }, { name: "ignored" }]) {
      expect((await sandbox.put(`/projects/${id}`, body)).body.project.webhook_url).toBe(
        "http://localhost:9001/h",
      );
    }
    const cleared = await setUrl(sandbox, id, "");
    expect(cleared.body.project.webhook_url).toBeNull();
    expect(cleared.body.project.webhook_signing_secret).toBe(secret);
    expect((await sandbox.get(`/projects/${id}`)).body.project.webhook_url).toBeNull();
  });

  it("refuses what is not an http(s) URL", async () => {
    const { project, sandbox } = await freshProject();
    for (const bad of ["ftp://example.com/x", "not a url", "https//example.com", 42]) {
      const { status, body } = await setUrl(sandbox, project.sandbox.project_id, bad);
      expect(status, String(bad)).toBe(400);
      expect(body.error_type).toBe("request.validation.invalid-webhook-url");
      expect(body.invalid_fields).toEqual([{ name: "webhook_url", message: expect.any(String) }]);
    }
  });

  it.each([
    ["http://93.184.215.14/hooks", "must be an https URL in live mode"],
    ["https://127.0.0.1/hooks", "127.0.0.1, a loopback address"],
    ["https://localhost/hooks", "a loopback address"],
    ["https://[::1]/hooks", "::1, a loopback address"],
    ["https://169.254.169.254/latest/meta-data/", "169.254.169.254, a linkLocal address"],
    ["https://[fd00:ec2::254]/", "a uniqueLocal address"],
    ["https://10.0.0.1/hooks", "10.0.0.1, a private address"],
    ["https://192.168.1.20/hooks", "a private address"],
    ["https://2130706433/hooks", "127.0.0.1, a loopback address"],
  ])("refuses %s in live mode (%s), and keeps the URL it had", async (url, reason) => {
    process.env[SANDBOX_PRIVATE_NETWORK_VARIABLE] = "allow";
    const { project, live } = await freshProject();
    const id = project.live.project_id;
    expect((await setUrl(live, id, "https://93.184.215.14/hooks")).status).toBe(200);
    const { status, body } = await setUrl(live, id, url);
    expect(status).toBe(400);
    expect(body.error_type).toBe("request.validation.invalid-webhook-url");
    expect(body.invalid_fields[0].name).toBe("webhook_url");
    expect(body.invalid_fields[0].message).toContain(reason);
    expect((await live.get(`/projects/${id}`)).body.project.webhook_url).toBe("https://93.184.215.14/hooks");
  });

  it("lets sandbox use http, and private receivers only in the local stack", async () => {
    const { project, sandbox } = await freshProject();
    const id = project.sandbox.project_id;
    expect((await setUrl(sandbox, id, "http://93.184.215.14/hooks")).status).toBe(200);
    // A deployed stage: no private receiver, even in sandbox.
    const refused = await setUrl(sandbox, id, "http://127.0.0.1:9000/hooks");
    expect(refused.status).toBe(400);
    expect(refused.body.invalid_fields[0].message).toContain("a loopback address");
    process.env[SANDBOX_PRIVATE_NETWORK_VARIABLE] = "allow";
    expect((await setUrl(sandbox, id, "http://127.0.0.1:9000/hooks")).status).toBe(200);
  });
});

describe("an invoice's webhook_url", () => {
  const invoice = { name: "Order", amount: "10.00", currency: "EUR" };

  it("is refused in live mode when it aims at a private or metadata address, or is not https", async () => {
    const { live } = await freshProject();
    for (const url of [
      "https://169.254.169.254/latest/meta-data/",
      "https://10.1.2.3/",
      "http://93.184.215.14/",
    ]) {
      const { status, body } = await live.post("/invoices", { ...invoice, webhook_url: url });
      expect(status, url).toBe(400);
      expect(body.error_type).toBe("request.validation.invalid-webhook-url");
      expect(body.invalid_fields[0].name).toBe("webhook_url");
    }
    const created = await live.post("/invoices", { ...invoice, webhook_url: "https://93.184.215.14/iv" });
    expect(created.status).toBe(200);
    const changed = await live.put(`/invoices/${created.body.invoice.id}`, {
      webhook_url: "https://[::1]/iv",
    });
    expect(changed.status).toBe(400);
    expect(changed.body.error_type).toBe("request.validation.invalid-webhook-url");
  });

  it("is checked at send time only in sandbox (an invoice never waits on DNS there)", async () => {
    const { sandbox } = await freshProject();
    const { status } = await sandbox.post("/invoices", { ...invoice, webhook_url: "http://127.0.0.1:9/iv" });
    expect(status).toBe(200);
  });
});
