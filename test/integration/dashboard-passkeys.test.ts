/**
 * Passkeys as the second factor (WebAuthn through `@simplewebauthn/server`), with a software
 * authenticator answering as a browser's would: registered from a signed-in session, then given
 * after the password instead of a TOTP code; the session is replaced, and a challenge, a wrong
 * origin or another person's passkey are refused.
 */
import { describe, expect, it } from "vitest";
import { useInProcessApi } from "../e2e/harness.ts";
import { Browser, projectWithOwner } from "../support/dashboard.ts";
import { SoftwareAuthenticator } from "../support/passkey.ts";

const local = useInProcessApi("Dashboard passkeys test");

describe("dashboard passkeys", () => {
  it("registers a passkey and signs in with it as the second factor, replacing the session", async () => {
    const { owner, ownerEmail } = await projectWithOwner(local.url);
    const authenticator = new SoftwareAuthenticator(local.url);
    const options = await owner.post("/dashboard/passkeys/options");
    expect(options.status, JSON.stringify(options.body)).toBe(200);
    expect(options.body.options.rp.id).toBe("localhost");
    const registered = await owner.post("/dashboard/passkeys", {
      credential: authenticator.create(options.body.options),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    expect(registered.body.user.passkeys).toBe(1);
    expect(registered.body.session.second_factor).toBe("done");

    const browser = new Browser(local.url);
    const password = await browser.signIn(ownerEmail);
    expect(password.body.session.second_factor).toBe("required");
    const preFactor = password.body.session.id;
    const request = await browser.post("/dashboard/sign-in/passkey/options");
    expect(request.status).toBe(200);
    expect(request.body.options.allowCredentials).toHaveLength(1);

    // From another origin, the assertion is refused (and the challenge is used up).
    const elsewhere = new SoftwareAuthenticator("https://evil.example");
    Object.assign(elsewhere, { credentialId: authenticator.credentialId });
    const phished = await browser.post("/dashboard/sign-in/passkey", {
      credential: elsewhere.get(request.body.options),
    });
    expect(phished.status).toBe(400);

    const again = await browser.post("/dashboard/sign-in/passkey/options");
    const signedIn = await browser.post("/dashboard/sign-in/passkey", {
      credential: authenticator.get(again.body.options),
    });
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    expect(signedIn.body.session.second_factor).toBe("done");
    expect(signedIn.body.session.id).not.toBe(preFactor);
    browser.environment = "live";
    expect((await browser.get("/customers")).status).toBe(200);

    // The same challenge cannot be answered twice.
    const replay = await browser.post("/dashboard/sign-in/passkey", {
      credential: authenticator.get(again.body.options),
    });
    expect(replay.status).not.toBe(200);
  });

  it("refuses another person's passkey", async () => {
    const first = await projectWithOwner(local.url);
    const second = await projectWithOwner(local.url);
    const theirs = new SoftwareAuthenticator(local.url);
    const options = await first.owner.post("/dashboard/passkeys/options");
    await first.owner.post("/dashboard/passkeys", { credential: theirs.create(options.body.options) });
    const mine = new SoftwareAuthenticator(local.url);
    const mineOptions = await second.owner.post("/dashboard/passkeys/options");
    await second.owner.post("/dashboard/passkeys", { credential: mine.create(mineOptions.body.options) });

    const browser = new Browser(local.url);
    await browser.signIn(second.ownerEmail);
    const request = await browser.post("/dashboard/sign-in/passkey/options");
    const refused = await browser.post("/dashboard/sign-in/passkey", {
      credential: theirs.get(request.body.options),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error_type).toBe("request.validation.invalid-credential");
  });
});
