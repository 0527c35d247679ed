import { execFile } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { Secret, TOTP } from "otpauth";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../../lib/local/paths.ts";
import { GATEWAYS } from "../../shared/gateways/catalogue.ts";
import { api, type Client, type RunningStack, startStack } from "../e2e/harness.ts";
import { type Receiver, startReceiver } from "../support/webhooks.ts";
import { type Browser, chromiumPath, launchChromium, NO_CHROMIUM, screenshots } from "./chromium.ts";

/**
 * The merchant dashboard in headless Chromium, on `npm start` (its own DynamoDB Local, so the
 * webhooks are its own): one signed-in browser walks what a merchant's staff does every day. Each
 * step's screenshot, at desktop (1280x800) and phone (390x844) widths, is kept in
 * `test/browser/screenshots/dashboard/`; axe-core checks every screen.
 */
if (!chromiumPath) console.warn(`Browser tests skipped: ${NO_CHROMIUM}`);

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const OWNER = { email: "owner@example.com", password: "correct horse battery staple" };
const execFileAsync = promisify(execFile);
/** Sign-in hashes passwords with scrypt (memory-hard, slow by design): on a busy machine an answer takes seconds. */
const SLOW = { timeout: 20_000 };

/** The command's environment: the running stack (found through its DATA_DIR), not the test run's table. */
function localStackEnvironment(stack: RunningStack): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: stack.dataDir };
  for (const name of ["TABLE_NAME", "DYNAMODB_ENDPOINT", "AWS_ENDPOINT_URL_DYNAMODB"]) delete env[name];
  return env;
}

/** `npm run -s project -- create` against the running stack: a project, its keys and its owner's one-time link. */
async function createProject(stack: RunningStack) {
  const { stdout } = await execFileAsync(
    process.execPath,
    [
      join(repoRoot, "node_modules", "tsx", "dist", "cli.mjs"),
      "bin/project.ts",
      "create",
      "--name",
      "Tea shop",
      "--owner-email",
      OWNER.email,
    ],
    { cwd: repoRoot, env: localStackEnvironment(stack) },
  );
  const link = /https?:\/\/\S+\/dashboard#\/accept\?token=[A-Za-z0-9_-]+/.exec(stdout)?.[0];
  const printed = JSON.parse(stdout.slice(stdout.indexOf("{")));
  if (!link) throw new Error(`No sign-in link in:\n${stdout}`);
  return { link, sandbox: printed.sandbox as { project_id: string; private_key: string } };
}

describe.skipIf(!chromiumPath)("the merchant dashboard in Chromium (npm start)", () => {
  let stack: RunningStack;
  let browser: Browser;
  let page: Page;
  let webhooks: Receiver;
  let merchant: Client;
  let sandbox: { project_id: string; private_key: string };
  let ownerLink: string;
  let totp: TOTP;
  const consoleErrors: string[] = [];
  const shot = screenshots("dashboard");
  // Only this run's pictures: a step renamed or dropped leaves none behind.
  const shotsFolder = join(repoRoot, "test", "browser", "screenshots", "dashboard");

  /** The step's screenshot at desktop and at phone width. */
  async function both(name: string) {
    await shot(page, `${name}-desktop`);
    await page.setViewportSize(PHONE);
    await shot(page, `${name}-phone`);
    await page.setViewportSize(DESKTOP);
  }

  /** axe-core on the screen shown: no serious or critical violation. */
  async function accessible(screen: string) {
    const source = await readFile(join(repoRoot, "node_modules", "axe-core", "axe.min.js"), "utf8");
    // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
    await page.evaluate(source);
    const violations = (await page.evaluate(
      `axe.run().then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))`,
    )) as { id: string; impact: string; nodes: number }[];
    expect(
      violations.filter((v) => v.impact === "serious" || v.impact === "critical"),
      `${screen}: ${JSON.stringify(violations)}`,
    ).toEqual([]);
  }

  const status = () => page.locator(".status-line p").textContent();
  const focused = () =>
    page.evaluate(
      `document.activeElement?.getAttribute("name") ?? document.activeElement?.textContent?.trim()`,
    ) as Promise<string | undefined>;
  /** Tab (or Shift+Tab) once, and say where the focus went. */
  const tab = async (back = false) => {
    await page.keyboard.press(back ? "Shift+Tab" : "Tab");
    return focused();
  };

  beforeAll(async () => {
    await rm(shotsFolder, { recursive: true, force: true });
    [stack, webhooks] = await Promise.all([startStack({ dynamodb: "own" }), startReceiver("dashboard")]);
    ({ link: ownerLink, sandbox } = await createProject(stack));
    merchant = api(stack.url, sandbox);
    // Two payments told apart by their cards' last four digits.
    for (const [number, amount] of [
      ["4242424242424242", "24.50"],
      ["5555555555554444", "42.00"],
    ] as const) {
      const { body: card } = await api(stack.url, { project_id: sandbox.project_id, private_key: "" }).post(
        "/cards",
        {
          number,
          exp_month: 12,
          exp_year: 2030,
          cvc2: "123",
        },
      );
      const { body } = await merchant.post("/invoices", { name: `Order ${amount}`, amount, currency: "EUR" });
      const paid = await merchant.post(`/invoices/${body.invoice.id}/capture`, { source: card.card.id });
      expect(paid.body.transaction.status).toBe("completed");
    }
    browser = launchChromium();
    page = await browser.page({ viewport: DESKTOP });
    page.on("console", (message) => {
      if (message.type() === "error" && /Content Security Policy/i.test(message.text()))
        consoleErrors.push(message.text());
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await webhooks?.close();
  });

  it("takes the owner's one-time link, sets a password and enrols an authenticator app", async () => {
    await page.goto(ownerLink.replace(/^https?:\/\/[^/]+/, stack.url));
    await page.getByLabel("New password").fill(OWNER.password);
    await page.getByLabel("Repeat the password").fill(OWNER.password);
    await both("accept-link");
    await accessible("accept");
    await page.getByRole("button", { name: "Set the password and sign in" }).click();
    await expect.poll(status, SLOW).toBe(`Signed in as ${OWNER.email}.`);
    await expect.poll(() => page.locator(".band").textContent()).toContain("Sandbox");

    await page.getByRole("link", { name: "Account" }).click();
    await page.getByRole("button", { name: "Set up an authenticator app" }).click();
    const secret = (await page.locator(".secret").textContent()) ?? "";
    totp = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) });
    // The step before now: signing in next takes this step's code, which is then new.
    await page.getByLabel("Code from the app").fill(totp.generate({ timestamp: Date.now() - 30_000 }));
    await page.getByRole("button", { name: "Confirm" }).click();
    await expect.poll(status, SLOW).toContain("Authenticator app set up");
    await both("totp-enrolled");
    await accessible("account");
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.getByRole("heading", { name: "Sign in to the dashboard" }).waitFor();
  });

  it("signs in by keyboard alone: skip link, email, password, then the TOTP code", async () => {
    await page.goto(`${stack.url}/dashboard`);
    await page.getByLabel("Email").waitFor();
    await accessible("sign-in");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("email");
    await page.keyboard.type(OWNER.email);
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("password");
    await page.keyboard.type(OWNER.password);
    await both("sign-in");
    await page.keyboard.press("Enter");

    await page.getByLabel("Authentication code").waitFor();
    // The code's field has the focus: no mouse needed.
    await expect.poll(focused).toBe("code");
    await page.keyboard.type(totp.generate());
    await both("sign-in-code");
    await accessible("sign-in-code");
    await page.keyboard.press("Enter");
    await expect.poll(status, SLOW).toBe(`Signed in as ${OWNER.email}.`);

    // The skip link is the first stop and moves the focus to the content.
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate("document.activeElement?.id")).toBe("main");
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.locator(".charts, .muted").first().waitFor();
    await both("overview");
    await accessible("overview");

    // Live opens: the second factor is done.
    await page.getByRole("button", { name: "Live" }).click();
    await expect.poll(() => page.locator(".band").textContent()).toContain("Live");
    await expect.poll(status, SLOW).toBe("Now showing live data.");
    await both("live");
    await page.getByRole("button", { name: "Sandbox" }).click();
    await expect.poll(() => page.locator(".band").textContent()).toContain("Sandbox");
  });

  it("changes the webhook URL", async () => {
    await page.getByRole("link", { name: "Developers" }).click();
    const field = page.getByLabel("Webhook URL");
    await field.fill(webhooks.url);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await expect.poll(status, SLOW).toBe(`Webhook URL set to ${webhooks.url}.`);
    expect((await merchant.get(`/projects/${sandbox.project_id}`)).body.project.webhook_url).toBe(
      webhooks.url,
    );
    await both("webhook-url");
    await accessible("developers");
  });

  it("finds a payment by its card's last four, refunds part of it, and shows the refund and its webhook", async () => {
    await page.getByRole("link", { name: "Payments" }).click();
    await page.getByRole("cell", { name: "visa •••• 4242" }).first().waitFor();
    await page.getByLabel("Search").fill("4444");
    // Searched on the server (GET /search), not among the rows the page had read.
    await page.getByText("1 of the 1 transactions found for “4444”.").waitFor();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(1);
    expect(await page.locator("tbody tr").textContent()).toContain("•••• 4444");
    await both("payments-search");
    await accessible("payments");

    await page.getByRole("link", { name: "Order 42.00" }).click();
    await page.getByRole("heading", { name: "Order 42.00" }).waitFor();
    await page.getByLabel(/Refund amount/).fill("10.00");
    await page.getByLabel("Reason").selectOption("customer_request");
    await page.getByRole("button", { name: "Refund", exact: true }).click();
    await expect.poll(status, SLOW).toMatch(/^Refunded 10\.00 EUR \(refund ref?_\w+\)\.$/);
    await expect.poll(() => page.locator("dd.refunded").textContent(), SLOW).toBe("10.00 EUR");
    await page.getByRole("cell", { name: "customer_request" }).waitFor();

    // The refund's event, and its webhook delivered to the URL set above.
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Refresh events" }).click();
          return page.locator("summary", { hasText: "transaction.refunded" }).count();
        },
        // Each click reloads the list; a slower answer than the interval would be dropped for the next.
        { timeout: 30_000, interval: 2_000 },
      )
      .toBe(1);
    await page.locator("summary", { hasText: "transaction.refunded" }).click();
    await expect
      .poll(() => page.locator(".event details[open] tbody tr").first().textContent(), { timeout: 15_000 })
      .toContain(webhooks.url);
    expect(await page.locator(".event details[open] tbody tr").first().textContent()).toContain("delivered");
    const eventId = (await page.locator(".event details[open] code").first().textContent()) ?? "";
    expect(webhooks.requests.map((request) => JSON.parse(request.body).event_id)).toContain(eventId);
    await both("payment-refunded");
    await accessible("payment");
  });

  it("rolls an API key and the new key opens the API", async () => {
    await page.getByRole("link", { name: "Developers" }).click();
    await page
      .getByRole("button", { name: /^Roll key/ })
      .first()
      .click();
    await expect.poll(status, SLOW).toContain("rolled");
    const key = (await page.getByTestId("new-private-key").textContent()) ?? "";
    expect(key).toMatch(/^key_sandbox_/);
    await both("key-rolled");
    const answer = await fetch(`${stack.url}/customers?limit=1`, {
      headers: { authorization: `Basic ${Buffer.from(`${sandbox.project_id}:${key}`).toString("base64")}` },
    });
    expect(answer.status).toBe(200);
  });

  it("edits a gateway configuration by keyboard alone: the API's refusal beside its field, secrets write-only", async () => {
    // From the page's top, no mouse: the skip link, then Tab until the configuration's edit toggle.
    await page.reload();
    await page.getByRole("heading", { name: "Developers", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Disable Sandbox cards" }).waitFor();
    expect(await tab()).toBe("Skip to content");
    await page.keyboard.press("Enter");
    const stops: (string | undefined)[] = [];
    while (stops.length < 40 && stops.at(-1) !== "Edit “Sandbox cards” (sandbox, card)")
      stops.push(await tab());
    // The order of the screen: keys, webhook, the configurations' table and buttons, then the edit toggle.
    const order = ["name", "webhook_url", "Save", "Disable", "Edit “Sandbox cards” (sandbox, card)"];
    const positions = order.map((stop) => stops.indexOf(stop));
    expect(
      positions.every((at) => at >= 0),
      JSON.stringify(stops),
    ).toBe(true);
    expect(positions, JSON.stringify(stops)).toEqual([...positions].sort((a, b) => a - b));
    await page.keyboard.press("Enter");
    await page.getByRole("form", { name: "Edit Sandbox cards" }).waitFor();

    expect(await tab()).toBe("name");
    await page.keyboard.press("Control+A");
    await page.keyboard.type("Tea cards");
    // Shift+Tab goes back to the toggle, Tab returns to the field typed in.
    expect(await tab(true)).toBe("Edit “Sandbox cards” (sandbox, card)");
    expect(await tab()).toBe("name");
    expect(await tab()).toBe("default_currency");
    await page.keyboard.type("EURO");
    const fields: (string | undefined)[] = [];
    for (let i = 0; i < 9; i++) fields.push(await tab());
    expect(fields).toEqual([
      "currencies",
      "enabled",
      "settings.merchant_account",
      "settings.api_key",
      "settings.outage",
      "settings.soft_decline_cards",
      "settings.unknown_outcome_cards",
      "settings.latency_ms",
      "Save Sandbox cards",
    ]);
    // Back to the secret: typed, sent once, never shown back.
    for (let i = 0; i < 5; i++) await tab(true);
    expect(await focused()).toBe("settings.api_key");
    await page.keyboard.type("sandbox-key-1234");
    await page.keyboard.press("Enter");
    // Refused: the message beside the field it names, which takes the focus.
    await expect.poll(focused, SLOW).toBe("default_currency");
    const currency = page.getByRole("form", { name: "Edit Sandbox cards" }).getByLabel("Default currency");
    expect(await currency.getAttribute("aria-invalid")).toBe("true");
    await expect
      .poll(async () => page.locator(`#${(await currency.getAttribute("id")) ?? ""}-error`).textContent())
      .toBe("must be a valid ISO 4217 currency code");
    const names = (await merchant.get("/gateway-configurations")).body.gateway_configurations.map(
      (c: { name: string }) => c.name,
    );
    expect(names).toContain("Sandbox cards");
    expect(names).not.toContain("Tea cards");
    await both("gateway-configuration-refused");
    await accessible("developers, a configuration's form open");

    await page.keyboard.press("Control+A");
    await page.keyboard.type("GBP");
    for (let i = 0; i < 9; i++) await tab();
    expect(await focused()).toBe("Save Sandbox cards");
    await page.keyboard.press("Space");
    await expect.poll(status, SLOW).toBe("Tea cards saved.");
    const { body } = await merchant.get("/gateway-configurations");
    const saved = body.gateway_configurations.find((c: { name: string }) => c.name === "Tea cards");
    expect(saved).toMatchObject({ default_currency: "GBP", enabled: true });
    expect(JSON.stringify(saved)).not.toContain("sandbox-key-1234");
    const form = page.getByRole("form", { name: "Edit Tea cards" });
    expect(await form.getByLabel("api_key", { exact: true }).inputValue()).toBe("");
    expect(await form.getByLabel("Name", { exact: true }).inputValue()).toBe("Tea cards");
    await both("gateway-configuration-saved");
  });

  it("adds a gateway configuration, its settings' refusals shown beside them", async () => {
    await page.getByText("Add a configuration").click();
    const form = page.getByRole("form", { name: "Add a gateway configuration" });
    // Each gateway of the catalogue, with its settings (secret ones as password fields); a live-only one
    // is not offered in a sandbox.
    const offered = await form.getByLabel("Gateway").locator("option").allTextContents();
    expect(offered).toEqual(Object.keys(GATEWAYS));
    for (const gateway of Object.values(GATEWAYS)) {
      await form.getByLabel("Gateway").selectOption(gateway.name);
      const fields = await form
        .locator("fieldset input")
        .evaluateAll((inputs) =>
          inputs.map((input) => `${input.getAttribute("name")} ${input.getAttribute("type")}`),
        );
      expect(fields).toEqual(
        gateway.settings
          .filter((setting) => setting.required !== "live")
          .map((setting) => `settings.${setting.name} ${setting.secret ? "password" : "text"}`),
      );
    }
    await form.getByLabel("Gateway").selectOption("stripe");
    await form.getByLabel("Name", { exact: true }).fill("Stripe test");
    await form.getByLabel("Enabled").selectOption("false");
    await form.getByLabel("secret_key (required)").fill("sk_live_abc123");
    await form.getByRole("button", { name: "Add the configuration" }).click();
    await expect
      .poll(() => form.getByLabel("secret_key (required)").getAttribute("aria-invalid"), SLOW)
      .toBe("true");
    expect(await form.locator(".error").first().textContent()).toContain("must be a test key");
    await both("gateway-configuration-add-refused");
    await accessible("developers, the add form open");
    await form.getByLabel("secret_key (required)").fill("sk_test_abc123");
    await form.getByRole("button", { name: "Add the configuration" }).click();
    await expect.poll(status, SLOW).toBe("Stripe test created.");
    const { body } = await merchant.get("/gateway-configurations?with_disabled=true");
    expect(body.gateway_configurations.find((c: { name: string }) => c.name === "Stripe test")).toMatchObject(
      {
        gateway_name: "stripe",
        enabled: false,
      },
    );
    await page.getByText("Edit “Stripe test” (stripe, card)").waitFor();
  });

  it("keeps the routing rules being typed when the page draws again, until reset", async () => {
    const rules = page.getByLabel("Rules (JSON, first match wins)");
    const saved = await rules.inputValue();
    await rules.fill('[{"action": {"type": "block", "reason": "typed"}}]');
    await page.getByRole("button", { name: "Simulate" }).click();
    await expect.poll(status, SLOW).toBe("Simulated.");
    // The configurations' list read again beside it (a change there redraws the screen).
    await page.getByRole("button", { name: "Disable Tea cards" }).click();
    await expect.poll(status, SLOW).toBe("Tea cards disabled.");
    await page.getByRole("button", { name: "Enable Tea cards" }).click();
    await expect.poll(status, SLOW).toBe("Tea cards enabled.");
    expect(await rules.inputValue()).toBe('[{"action": {"type": "block", "reason": "typed"}}]');
    await page.getByRole("button", { name: "Reset to the saved rules" }).click();
    expect(await rules.inputValue()).toBe(saved);
  });

  it("shows every other screen without an accessibility violation or a CSP refusal", async () => {
    for (const [link, heading] of [
      ["Customers", "Customers"],
      ["Subscriptions", "Plans and subscriptions"],
      ["Events", "Events"],
      ["Team", "Team"],
      ["Audit log", "Audit log"],
    ] as const) {
      await page.getByRole("link", { name: link, exact: true }).click();
      await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
      await page.locator("main .muted, main table").first().waitFor();
      await both(link.toLowerCase().replace(/\W+/g, "-"));
      await accessible(link);
    }
    expect(await page.locator("main").textContent()).toContain("POST /transactions/{transaction_id}/refunds");
    expect(consoleErrors).toEqual([]);
  });
  it("registers a passkey (Chromium's virtual authenticator) and signs in with it instead of a code", async () => {
    const devtools = await page.context().newCDPSession(page);
    await devtools.send("WebAuthn.enable");
    const { authenticatorId } = await devtools.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await expect.poll(status, SLOW).toBe("Passkey added: use it instead of a code when you sign in.");
    expect((await devtools.send("WebAuthn.getCredentials", { authenticatorId })).credentials).toHaveLength(1);
    await both("passkey-added");

    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill(OWNER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Use a passkey" }).click();
    await expect.poll(status, SLOW).toBe(`Signed in as ${OWNER.email}.`);
    await page.getByRole("button", { name: "Live" }).click();
    await expect.poll(() => page.locator(".band").textContent()).toContain("Live");
  });
});
