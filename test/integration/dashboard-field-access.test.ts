/**
 * What a role may see and change inside a route it may call (issue 24): the webhook signing secret
 * (with it anyone can forge a delivery the merchant trusts) is shown to owners, developers and
 * private keys only; support and read-only people read the project with the secret as null. A
 * support person may cancel a subscription with `PUT /subscriptions/{id}` (`cancel_at`), and change
 * nothing else of it there (plan, amount, source, coupon are an owner's).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { api, useInProcessApi } from "../e2e/harness.ts";
import { type Browser, invited, type OwnedProject, projectWithOwner } from "../support/dashboard.ts";

const local = useInProcessApi("Dashboard field access test");

let project: OwnedProject;
const people: Partial<Record<"owner" | "developer" | "support" | "read-only", Browser>> = {};

beforeAll(async () => {
  project = await projectWithOwner(local.url, "Dashboard field access");
  people.owner = project.owner;
  for (const role of ["developer", "support", "read-only"] as const) {
    people[role] = (await invited(project.owner, role)).browser;
  }
});

describe("the webhook signing secret", () => {
  it("is shown to a private key, an owner and a developer, and to nobody else", async () => {
    const sandboxId = project.project.sandbox.project_id;
    const byKey = await api(local.url, project.project.sandbox).get(`/projects/${sandboxId}`);
    expect(byKey.status).toBe(200);
    const secret = byKey.body.project.webhook_signing_secret;
    expect(secret).toEqual(expect.any(String));
    expect(secret.length).toBeGreaterThan(20);

    const seen: Record<string, unknown> = {};
    for (const [role, browser] of Object.entries(people)) {
      const answer = await (browser as Browser).get(`/projects/${sandboxId}`);
      expect(answer.status, role).toBe(200);
      expect(answer.body.project.id, role).toBe(sandboxId);
      seen[role] = answer.body.project.webhook_signing_secret;
    }
    expect(seen).toEqual({ owner: secret, developer: secret, support: null, "read-only": null });
  });
});

describe("a subscription's change by a support person", () => {
  const path = "/subscriptions/sub_01J00000000000000000000000";

  it("may set the cancellation and nothing else: another field is a 403 naming it, before any work", async () => {
    const support = people.support as Browser;
    const cancel = await support.put(path, { cancel_at: "2099-01-01T00:00:00Z" });
    // Past the role's check: the handler ran and the subscription does not exist.
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(404);
    for (const field of ["amount", "plan_id", "source", "coupon_id", "interval"]) {
      const value = field === "amount" ? "1.00" : field === "interval" ? "1m" : "x";
      const answer = await support.put(path, { cancel_at: "2099-01-01T00:00:00Z", [field]: value });
      expect(answer.status, field).toBe(403);
      expect(answer.body.error_type, field).toBe("request.dashboard.forbidden");
      expect(answer.body.invalid_fields, field).toEqual([{ name: field, message: expect.any(String) }]);
    }
  });

  it("is not limited for an owner", async () => {
    const answer = await (people.owner as Browser).put(path, { amount: "1.00" });
    expect(answer.status, JSON.stringify(answer.body)).toBe(404);
  });
});
