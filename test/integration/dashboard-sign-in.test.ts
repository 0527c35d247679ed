/**
 * The dashboard's sign-in (issue 24, "People, not keys"): a one-time link sets the first owner's
 * password; password sign-in sets an HttpOnly, Secure, SameSite=Strict cookie holding a secret the
 * table keeps only hashed; sessions expire (idle and absolute); a factor given replaces the session
 * (no fixation); TOTP codes are computed here from the secret, and one is accepted once; failures
 * bring growing delays and a lockout, for an unknown email the same way.
 */
import { createHash } from "node:crypto";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { config } from "../../shared/config.ts";
import { dashboardKeys } from "../../shared/dashboard/keys.ts";
import { LOCK_AFTER } from "../../shared/dashboard/lockout.ts";
import { dynamo } from "../../shared/db/client.ts";
import { useInProcessApi } from "../e2e/harness.ts";
import {
  Browser,
  enrolTotp,
  PASSWORD,
  projectWithOwner,
  tokenOf,
  totpCode,
  uniqueEmail,
} from "../support/dashboard.ts";

const local = useInProcessApi("Dashboard sign-in test");

afterEach(() => {
  vi.restoreAllMocks();
});

/** Moves the service's clock to `at` (the test's own requests still run now). */
function clockAt(at: Date) {
  vi.spyOn(clock, "now").mockImplementation(() => new Date(at));
}

describe("dashboard sign-in", () => {
  it("signs the first owner in from their one-time link, with a session cookie the table keeps only hashed", async () => {
    const { owner, ownerEmail, rootProjectId } = await projectWithOwner(local.url);
    const browser = new Browser(local.url);
    const signedIn = await browser.signIn(ownerEmail.toUpperCase());
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user).toMatchObject({ email: ownerEmail, role: "owner", project_id: rootProjectId });
    expect(signedIn.body.session).toMatchObject({
      second_factor: "not-enrolled",
      role: "owner",
      project_id: rootProjectId,
      environments: { sandbox: `test-${rootProjectId}`, live: rootProjectId },
    });

    const [cookie] = signedIn.setCookies;
    expect(cookie).toMatch(/^__Host-session=[^;]+; /);
    const flags = (cookie ?? "").split(";").map((part) => part.trim());
    expect(flags).toEqual(expect.arrayContaining(["HttpOnly", "Secure", "SameSite=Strict", "Path=/"]));
    expect(flags.some((flag) => /^Domain=/i.test(flag))).toBe(false);

    // The secret is in the cookie only: the table holds its SHA-256, and the answer never holds it.
    const secret = (browser.cookie ?? "").split(".").at(-1) ?? "";
    expect(secret).toHaveLength(43);
    expect(JSON.stringify(signedIn.body)).not.toContain(secret);
    const { Items } = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": dashboardKeys.sessionsOf(rootProjectId, signedIn.body.user.id) },
      }),
    );
    const stored = JSON.stringify(Items);
    expect(stored).not.toContain(secret);
    expect(stored).toContain(createHash("sha256").update(secret).digest("hex"));

    expect((await browser.get("/dashboard/session")).body.user.email).toBe(ownerEmail);
    expect(owner.session.second_factor).toBe("not-enrolled");
  });

  it("refuses a link used twice, a short password, and a wrong password, without telling an unknown email apart", async () => {
    const { owner, ownerEmail } = await projectWithOwner(local.url);
    const browser = new Browser(local.url);
    const wrong = await browser.signIn(ownerEmail, "not the password at all");
    const unknown = await browser.signIn(uniqueEmail("nobody"), "not the password at all");
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    expect(wrong.setCookies).toEqual([]);

    const never = await browser.post("/dashboard/accept", { token: "A".repeat(43), password: PASSWORD });
    expect(never.status).toBe(400);
    expect(never.body.error_type).toBe("request.dashboard.link-invalid");

    const invitation = await owner.post("/dashboard/invitations", {
      email: uniqueEmail("dev"),
      role: "developer",
    });
    const token = tokenOf(invitation.body.link);
    const short = await browser.post("/dashboard/accept", { token, password: "eleven char" });
    expect(short.status).toBe(400);
    expect(short.body.invalid_fields).toEqual([
      { name: "password", message: "must be at least 12 characters" },
    ]);
    expect((await browser.post("/dashboard/accept", { token, password: PASSWORD })).status).toBe(200);
    const reused = await new Browser(local.url).post("/dashboard/accept", { token, password: PASSWORD });
    expect(reused.status).toBe(400);
    expect(reused.body.error_type).toBe("request.dashboard.link-invalid");
  });

  it("signs out this session, and everywhere every session of the person", async () => {
    const { owner, ownerEmail } = await projectWithOwner(local.url);
    const first = new Browser(local.url);
    const second = new Browser(local.url);
    await first.signIn(ownerEmail);
    await second.signIn(ownerEmail);

    const out = await first.post("/dashboard/sign-out");
    expect(out.status).toBe(200);
    expect(out.setCookies[0]).toMatch(/^__Host-session=; .*Max-Age=0/);
    expect(first.cookie).toBeUndefined();
    expect((await second.get("/dashboard/session")).status).toBe(200);

    const third = new Browser(local.url);
    await third.signIn(ownerEmail);
    const everywhere = await second.post("/dashboard/sign-out-everywhere");
    expect(everywhere.status).toBe(200);
    // The owner's own from their link, the second's, the third's.
    expect(everywhere.body.sessions_ended).toBe(3);
    for (const browser of [owner, third]) {
      const after = await browser.get("/dashboard/session");
      expect(after.status).toBe(401);
      expect(after.body.error_type).toBe("request.dashboard.signed-out");
    }
  });

  it("ends a session idle for 30 minutes, and any session after 12 hours however active", async () => {
    const { ownerEmail } = await projectWithOwner(local.url);
    const browser = new Browser(local.url);
    const start = new Date();
    clockAt(start);
    await browser.signIn(ownerEmail);

    clockAt(new Date(start.getTime() + 29 * 60_000));
    expect((await browser.get("/dashboard/session")).status).toBe(200);
    clockAt(new Date(start.getTime() + 58 * 60_000));
    expect((await browser.get("/dashboard/session")).status, "extended by the call before").toBe(200);
    clockAt(new Date(start.getTime() + 89 * 60_000));
    expect((await browser.get("/dashboard/session")).status, "idle for 31 minutes").toBe(401);

    const active = new Browser(local.url);
    clockAt(start);
    await active.signIn(ownerEmail);
    for (let minutes = 25; minutes < 12 * 60; minutes += 25) {
      clockAt(new Date(start.getTime() + minutes * 60_000));
      expect((await active.get("/dashboard/session")).status).toBe(200);
    }
    clockAt(new Date(start.getTime() + 12 * 3600_000 + 1000));
    expect((await active.get("/dashboard/session")).status, "past the absolute expiry").toBe(401);
    // Nor does the expired session open the API.
    expect((await active.get("/customers")).status).toBe(401);
  });

  it("enrols TOTP; the next sign-in waits for a code, replaces the session, and refuses the code a second time", async () => {
    const { owner, ownerEmail } = await projectWithOwner(local.url);
    const secret = await enrolTotp(owner);
    expect(owner.session.second_factor).toBe("done");
    // Sealed at rest, and never answered again.
    const { Item: stored } = await dynamo.send(
      new GetCommand({ TableName: config.tableName, Key: dashboardKeys.user(ownerEmail) }),
    );
    expect(stored?.totp_secret).toMatchObject({ v: 1, data: expect.any(String) });
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(JSON.stringify((await owner.get("/dashboard/session")).body)).not.toContain(secret);

    const browser = new Browser(local.url);
    const password = await browser.signIn(ownerEmail);
    expect(password.body.session.second_factor).toBe("required");
    const preFactor = { cookie: browser.cookie, csrf: browser.csrf, id: password.body.session.id };
    // Before the code the session opens nothing but itself.
    const early = await browser.get("/customers");
    expect(early.status).toBe(403);
    expect(early.body.error_type).toBe("request.dashboard.second-factor-required");
    expect((await browser.get("/dashboard/users")).status).toBe(403);

    // Codes of the next 30-second step: the enrolment used this one's.
    const later = new Date(Date.now() + 30_000);
    clockAt(later);
    const code = totpCode(secret, later);
    const factor = await browser.post("/dashboard/sign-in/totp", { code });
    expect(factor.status, JSON.stringify(factor.body)).toBe(200);
    expect(factor.body.session.second_factor).toBe("done");
    expect(factor.body.session.id).not.toBe(preFactor.id);
    expect(browser.cookie).not.toBe(preFactor.cookie);
    expect(browser.csrf).not.toBe(preFactor.csrf);

    // Fixation: the session of before the factor opens nothing any more.
    const old = new Browser(local.url);
    old.cookie = preFactor.cookie;
    old.csrf = preFactor.csrf;
    expect((await old.get("/dashboard/session")).status).toBe(401);
    expect((await old.get("/customers", { environment: "live" })).status).toBe(401);

    // Live opens now.
    browser.environment = "live";
    expect((await browser.get("/customers")).status).toBe(200);

    // The same code again (another sign-in, same step): refused.
    const again = new Browser(local.url);
    await again.signIn(ownerEmail);
    const replay = await again.post("/dashboard/sign-in/totp", { code });
    expect(replay.status).toBe(400);
    expect(replay.body.error_type).toBe("request.validation.invalid-code");
    // A code of the following step is accepted.
    const next = new Date(later.getTime() + 30_000);
    clockAt(next);
    expect((await again.post("/dashboard/sign-in/totp", { code: totpCode(secret, next) })).status).toBe(200);
  });

  it("refuses live without a second factor and says so", async () => {
    const { owner } = await projectWithOwner(local.url);
    expect((await owner.get("/customers", { environment: "sandbox" })).status).toBe(200);
    const live = await owner.get("/customers", { environment: "live" });
    expect(live.status).toBe(403);
    expect(live.body.error_type).toBe("request.dashboard.second-factor-required");
  });

  it("delays failed sign-ins more and more, then locks, counting racing failures, the same for an unknown email", async () => {
    const { ownerEmail } = await projectWithOwner(local.url);
    const unknownEmail = uniqueEmail("nobody");
    const browser = new Browser(local.url);
    let at = Date.now();
    clockAt(new Date(at));
    // Two failures at once both count.
    await Promise.all([
      browser.signIn(ownerEmail, "wrong password 1"),
      browser.signIn(ownerEmail, "wrong password 2"),
    ]);
    await browser.signIn(ownerEmail, "wrong password 3");
    await Promise.all([
      browser.signIn(unknownEmail, "wrong password 1"),
      browser.signIn(unknownEmail, "wrong password 2"),
    ]);
    await browser.signIn(unknownEmail, "wrong password 3");

    for (const email of [ownerEmail, unknownEmail]) {
      // After 3 failures, the next waits 1 s: refused at once, even with the right password.
      const waiting = await browser.signIn(email);
      expect(waiting.status, email).toBe(429);
      expect(waiting.headers.get("retry-after")).toBe("1");
      expect(waiting.body.error_type).toBe("request.dashboard.too-many-attempts");
    }
    // Failures go on, each once its delay passed: the delays double.
    const retryAfters: string[] = [];
    for (let failures = 3; failures < LOCK_AFTER; failures++) {
      at += 2 ** (failures - 3) * 1000;
      clockAt(new Date(at));
      const failed = await browser.signIn(ownerEmail, "still the wrong password");
      expect(failed.status).toBe(401);
      retryAfters.push((await browser.signIn(ownerEmail)).headers.get("retry-after") ?? "");
      const unknown = await browser.signIn(unknownEmail, "still the wrong password");
      expect(unknown.status).toBe(401);
    }
    expect(retryAfters).toEqual(["2", "4", "8", "16", "32", "64", "900"]);
    const locked = await browser.signIn(ownerEmail);
    const lockedUnknown = await browser.signIn(unknownEmail);
    expect(locked.status).toBe(429);
    expect(locked.body.message).toContain("locked");
    expect(lockedUnknown.body).toEqual(locked.body);

    // The lock ends, and the right password then clears the count.
    at += 15 * 60_000;
    clockAt(new Date(at));
    expect((await browser.signIn(ownerEmail)).status).toBe(200);
    expect((await browser.signIn(ownerEmail, "one wrong password")).status).toBe(401);
    expect((await browser.signIn(ownerEmail)).status).toBe(200);
  });
});
