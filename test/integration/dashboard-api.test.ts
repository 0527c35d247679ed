/**
 * The existing API called from the dashboard (issue 24): the session cookie instead of a key,
 * `X-Environment`, and the CSRF token on every change; the role × action matrix over every route
 * (every role tried on a representative action of each class); another project's ids answer 404;
 * a private key made through a session is never shown again; every change lands in the audit log
 * with who, what, when and from where; API keys work exactly as before.
 */
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { routeKey, routes } from "../../lib/topology.ts";
import { ACTION_CLASSES, actionOf, ROLES } from "../../shared/dashboard/roles.ts";
import { dynamo } from "../../shared/db/client.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";
import { type Browser, invited, type OwnedProject, projectWithOwner } from "../support/dashboard.ts";

const local = useInProcessApi("Dashboard API test");

const UNKNOWN_INVOICE = "iv_01J00000000000000000000000";
const UNKNOWN_CONFIGURATION = "gway_conf_01J00000000000000000000000";

let project: OwnedProject;
let people: Record<(typeof ROLES)[number], Browser>;

beforeAll(async () => {
  project = await projectWithOwner(local.url, "Dashboard API");
  const [developer, support, readOnly] = await Promise.all(
    ["developer", "support", "read-only"].map((role) => invited(project.owner, role)),
  );
  people = {
    owner: project.owner,
    developer: (developer as { browser: Browser }).browser,
    support: (support as { browser: Browser }).browser,
    "read-only": (readOnly as { browser: Browser }).browser,
  };
});

describe("the role × action table", () => {
  it("classifies every route of the topology", () => {
    const unclassified = routes.map(routeKey).filter((key) => actionOf(key) === undefined);
    expect(unclassified).toEqual([]);
    for (const route of routes) {
      expect(ACTION_CLASSES).toContain(actionOf(routeKey(route)));
      // A route without credentials takes no session; every other change is at least a support action.
      if (route.unauthenticated && !route.path.startsWith("/dashboard/")) {
        expect(actionOf(routeKey(route)), routeKey(route)).toBe("public");
      }
    }
  });

  /** A representative action of every class, and what each role is answered. */
  const ACTIONS: {
    class: string;
    call: (browser: Browser) => Promise<{ status: number; body: { error_type?: string } }>;
    allowed: readonly string[];
    /** The status an allowed role gets (the handler ran). */
    status: number;
  }[] = [
    { class: "self", call: (b) => b.get("/dashboard/session"), allowed: ROLES, status: 200 },
    { class: "read", call: (b) => b.get("/customers"), allowed: ROLES, status: 200 },
    {
      class: "read (a search by POST)",
      call: (b) => b.post("/transactions", {}),
      allowed: ROLES,
      status: 200,
    },
    {
      class: "support",
      // An unknown invoice: a role allowed to refund reaches the handler, which answers 404.
      call: (b) => b.post(`/invoices/${UNKNOWN_INVOICE}/refunds`, { amount: "1.00" }),
      allowed: ["owner", "support"],
      status: 404,
    },
    {
      class: "developer",
      // An unknown configuration: a role allowed to change configurations reaches the handler's 404.
      call: (b) => b.del(`/gateway-configurations/${UNKNOWN_CONFIGURATION}`),
      allowed: ["owner", "developer"],
      status: 404,
    },
    {
      class: "owner",
      call: (b) => b.post("/customers", { first_name: "Ada" }),
      allowed: ["owner"],
      status: 200,
    },
    { class: "owner (people)", call: (b) => b.get("/dashboard/users"), allowed: ["owner"], status: 200 },
    {
      class: "owner (audit log)",
      call: (b) => b.get("/dashboard/audit-log"),
      allowed: ["owner"],
      status: 200,
    },
  ];

  for (const action of ACTIONS) {
    it(`lets ${action.allowed.join(", ")} take a ${action.class} action, and refuses the others`, async () => {
      for (const role of ROLES) {
        const answer = await action.call(people[role]);
        if (action.allowed.includes(role)) {
          expect(answer.status, `${role}: ${JSON.stringify(answer.body)}`).toBe(action.status);
        } else {
          expect(answer.status, role).toBe(403);
          expect(answer.body.error_type).toBe("request.dashboard.forbidden");
        }
      }
    });
  }
});

describe("calls of the API with a session", () => {
  it("refuses a change without the CSRF token, with a wrong one, with another session's, or from another origin", async () => {
    const { owner } = project;
    const before = (await owner.get("/customers")).body.total_count;
    const refusals = [
      await owner.post("/customers", { first_name: "Mallory" }, { csrf: null }),
      await owner.post("/customers", { first_name: "Mallory" }, { csrf: "x".repeat(43) }),
      await owner.post("/customers", { first_name: "Mallory" }, { csrf: people.developer.csrf ?? "" }),
      await owner.post("/dashboard/invitations", { email: "m@example.com", role: "owner" }, { csrf: null }),
    ];
    for (const refused of refusals) {
      expect(refused.status).toBe(403);
      expect(refused.body.error_type).toBe("request.dashboard.csrf");
    }
    const elsewhere = await owner.post(
      "/customers",
      { first_name: "Mallory" },
      { headers: { origin: "https://evil.example" } },
    );
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error_type).toBe("request.dashboard.origin");
    expect((await owner.get("/customers")).body.total_count).toBe(before);
    // GETs need no token; the right token makes the change.
    expect((await owner.post("/customers", { first_name: "Ada" })).status).toBe(200);
  });

  it("needs X-Environment, and answers another project's ids 404", async () => {
    const missing = await project.owner.get("/customers", { environment: null });
    expect(missing.status).toBe(400);
    expect(missing.body.invalid_fields[0].name).toBe("X-Environment");

    const other = await projectWithOwner(local.url, "Another project");
    const { customer } = (await other.owner.post("/customers", { first_name: "Theirs" })).body;
    for (const answer of [
      await project.owner.get(`/customers/${customer.id}`),
      await project.owner.put(`/customers/${customer.id}`, { first_name: "Mine" }),
      await project.owner.del(`/customers/${customer.id}`),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.body.error_type).toBe("resource.customer.not-found");
    }
    expect((await other.owner.get(`/customers/${customer.id}`)).body.customer.first_name).toBe("Theirs");
    // Nor can a person of this project reach another person of the other.
    const theirPeople = (await other.owner.get("/dashboard/users")).body.users;
    const answer = await project.owner.put(`/dashboard/users/${theirPeople[0].id}`, { role: "read-only" });
    expect(answer.status).toBe(404);
  });

  it("shows a private key made through a session once: never in the list, the activities or the audit log", async () => {
    const created = await people.developer.post("/api-keys", { name: "From the dashboard" });
    expect(created.status).toBe(200);
    const secret = created.body.private_key as string;
    expect(secret).toMatch(/^key_sandbox_/);
    const listed = await people.developer.get("/api-keys");
    expect(listed.body.api_keys.map((key: { id: string }) => key.id)).toContain(created.body.api_key.id);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    const audit = await project.owner.get("/dashboard/audit-log?limit=100");
    expect(JSON.stringify(audit.body)).not.toContain(secret);
    const activities = await people.developer.get("/activities");
    expect(JSON.stringify(activities.body)).not.toContain(secret);
    // The activity names the person.
    const made = activities.body.activities.find(
      (activity: { type: string; subject: { id: string } }) =>
        activity.type === "api_key.created" && activity.subject.id === created.body.api_key.id,
    );
    expect(made.actor).toMatchObject({
      credential: "dashboard",
      user: { email: (await people.developer.get("/dashboard/session")).body.user.email, role: "developer" },
    });
    // The key opens the API like any other; the cookie alongside a key changes nothing.
    const sandbox = project.project.sandbox.project_id;
    expect(
      (await api(local.url, { project_id: sandbox, private_key: secret }).get("/customers")).status,
    ).toBe(200);
    const wrongKey = await people.developer.get("/customers", {
      headers: { authorization: `Basic ${Buffer.from(`${sandbox}:key_sandbox_wrong`).toString("base64")}` },
    });
    expect(wrongKey.status).toBe(401);
  });

  it("records every change with who, what, when, where and its outcome, newest first, for owners", async () => {
    const { owner, ownerEmail } = project;
    const made = await owner.post(
      "/customers",
      { first_name: "Audited" },
      { headers: { "user-agent": "audit-test/1" } },
    );
    const customerId = made.body.customer.id;
    await owner.put(`/customers/${customerId}`, { first_name: "Changed" });
    const failed = await owner.put(`/customers/${customerId}`, { email: "not an email" });
    expect(failed.status).toBe(400);

    const log = await owner.get("/dashboard/audit-log?limit=3");
    expect(log.status).toBe(200);
    const [newest, middle, oldest] = log.body.audit_log;
    expect(oldest).toMatchObject({
      actor: { email: ownerEmail, role: "owner" },
      action: "api.request",
      route: "POST /customers",
      method: "POST",
      path: "/customers",
      environment: project.project.sandbox.project_id,
      user_agent: "audit-test/1",
      outcome: "succeeded",
      status: 200,
    });
    expect(oldest.ip_address).toMatch(/127\.0\.0\.1|::1/);
    expect(middle).toMatchObject({
      route: "PUT /customers/{customer_id}",
      subject: { type: "customer", id: customerId },
    });
    expect(newest).toMatchObject({ outcome: "failed", status: 400 });
    expect(Date.parse(newest.created_at)).toBeGreaterThanOrEqual(Date.parse(oldest.created_at));

    // The next page goes on from the last id.
    const next = await owner.get(`/dashboard/audit-log?limit=2&starting_after=${oldest.id}`);
    expect(next.body.audit_log).toHaveLength(2);
    expect(next.body.audit_log[0].id < oldest.id).toBe(true);

    // Sign-ins, failed ones and invitations are in it too.
    const all = (await owner.get("/dashboard/audit-log?limit=100")).body.audit_log;
    const actions = new Set(all.map((entry: { action: string }) => entry.action));
    for (const action of ["link.accepted", "user.invited"]) expect(actions).toContain(action);
    const invitation = all.find((entry: { action: string }) => entry.action === "user.invited");
    expect(invitation).toMatchObject({ outcome: "succeeded", detail: expect.stringMatching(/ invited as /) });
  });

  it("makes no change it could not write to the audit log first", async () => {
    const { owner } = project;
    const before = (await owner.get("/customers")).body.total_count;
    const send = dynamo.send.bind(dynamo);
    vi.spyOn(dynamo, "send").mockImplementation((async (command: unknown) => {
      const item = command instanceof PutCommand ? command.input.Item : undefined;
      if (String(item?.pk).endsWith("#dashboard-audit")) throw new Error("The audit log is unavailable");
      return send(command as never);
    }) as never);
    try {
      const refused = await owner.post("/customers", { first_name: "Unaudited" });
      expect(refused.status).toBe(500);
      const invitation = await owner.post("/dashboard/invitations", {
        email: "unaudited@example.com",
        role: "support",
      });
      expect(invitation.status).toBe(500);
    } finally {
      vi.restoreAllMocks();
    }
    expect((await owner.get("/customers")).body.total_count).toBe(before);
  });

  it("ends a person's sessions when an owner changes their role, and refuses an owner's change of their own", async () => {
    const { browser, email } = await invited(project.owner, "developer");
    const { users } = (await project.owner.get("/dashboard/users")).body;
    const person = users.find((user: { email: string }) => user.email === email);
    const changed = await project.owner.put(`/dashboard/users/${person.id}`, { role: "read-only" });
    expect(changed.body.user.role).toBe("read-only");
    expect((await browser.get("/customers")).status).toBe(401);
    await browser.signIn(email);
    expect(browser.session.role).toBe("read-only");
    expect((await browser.del(`/gateway-configurations/${UNKNOWN_CONFIGURATION}`)).status).toBe(403);

    const own = users.find((user: { email: string }) => user.email === project.ownerEmail);
    const refused = await project.owner.put(`/dashboard/users/${own.id}`, { role: "read-only" });
    expect(refused.status).toBe(409);

    expect((await project.owner.del(`/dashboard/users/${person.id}`)).status).toBe(200);
    expect((await browser.get("/dashboard/session")).status).toBe(401);
    expect((await browser.signIn(email)).status).toBe(401);

    const log = (await project.owner.get("/dashboard/audit-log?limit=10")).body.audit_log;
    const subjectOf = (action: string) =>
      log.find(
        (entry: { action: string; status: number }) => entry.action === action && entry.status === 200,
      );
    expect(subjectOf("user.role_changed")).toMatchObject({
      subject: { type: "user", id: person.id },
      detail: `${email} is now read-only`,
      outcome: "succeeded",
    });
    expect(subjectOf("user.removed")).toMatchObject({ detail: `${email} removed`, outcome: "succeeded" });
    // The refused change of the owner's own role is in it too, with its outcome.
    expect(
      log.some(
        (entry: { action: string; status: number }) =>
          entry.action === "user.role_changed" && entry.status === 409,
      ),
    ).toBe(true);
  });
});
