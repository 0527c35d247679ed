/**
 * A browser's view of the dashboard for integration tests: one cookie jar (the session cookie), the
 * session's CSRF token, and the environment switch, over the in-process API. People are made the
 * way the product makes them: a project's first owner from a one-time link (`firstOwner`, what
 * `npm run -s project -- create --owner-email` does), the others invited by an owner.
 */
import { TOTP } from "otpauth";
import { firstOwner } from "../../shared/dashboard/links.ts";
import { createProject, type ProjectCredentials } from "../../shared/projects/project.ts";

export const PASSWORD = "correct horse battery staple";

export interface DashboardAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: answers are asserted on field by field
  body: any;
  headers: Headers;
  setCookies: string[];
}

export interface SendOptions {
  /** `null`: no X-CSRF-Token at all; a string: that token; default: the session's own. */
  csrf?: string | null;
  environment?: "sandbox" | "live" | null;
  headers?: Record<string, string>;
}

export class Browser {
  cookie: string | undefined;
  csrf: string | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: the last session answered
  session: any;
  environment: "sandbox" | "live" = "sandbox";

  constructor(readonly url: string) {}

  async send(
    method: string,
    path: string,
    body?: unknown,
    options: SendOptions = {},
  ): Promise<DashboardAnswer> {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    if (this.cookie) headers.cookie = `__Host-session=${this.cookie}`;
    const environment = options.environment === undefined ? this.environment : options.environment;
    if (environment) headers["x-environment"] = environment;
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    if (method !== "GET" && csrf) headers["x-csrf-token"] = csrf;
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(new URL(path, this.url), {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    const setCookies = response.headers.getSetCookie();
    for (const cookie of setCookies) {
      const match = /^__Host-session=([^;]*)/.exec(cookie);
      if (match) this.cookie = match[1] || undefined;
    }
    // biome-ignore lint/suspicious/noExplicitAny: read field by field
    const answer = parsed as any;
    if (answer?.session?.csrf_token) {
      this.csrf = answer.session.csrf_token;
      this.session = answer.session;
    }
    return { status: response.status, body: parsed, headers: response.headers, setCookies };
  }

  get = (path: string, options?: SendOptions) => this.send("GET", path, undefined, options);
  post = (path: string, body?: unknown, options?: SendOptions) =>
    this.send("POST", path, body ?? {}, options);
  put = (path: string, body?: unknown, options?: SendOptions) => this.send("PUT", path, body ?? {}, options);
  del = (path: string, options?: SendOptions) => this.send("DELETE", path, undefined, options);

  signIn(email: string, password = PASSWORD) {
    return this.post("/dashboard/sign-in", { email, password });
  }
}

/** The token of a link `<base>/dashboard#/accept?token=…`. */
export const tokenOf = (link: string) => new URL(link.replace("#/", "")).searchParams.get("token") ?? "";

let emails = 0;
export const uniqueEmail = (who: string) => `${who}-${Date.now()}-${emails++}@example.com`;

export interface OwnedProject {
  project: ProjectCredentials;
  rootProjectId: string;
  owner: Browser;
  ownerEmail: string;
}

/** A new project and its first owner, signed in through their one-time link (no second factor yet). */
export async function projectWithOwner(url: string, name = "Dashboard test"): Promise<OwnedProject> {
  const project = await createProject(name);
  const ownerEmail = uniqueEmail("owner");
  const { token } = await firstOwner(project.live.project_id, ownerEmail, new Date());
  const owner = new Browser(url);
  const accepted = await owner.post("/dashboard/accept", { token, password: PASSWORD });
  if (accepted.status !== 200) throw new Error(`accept: ${JSON.stringify(accepted.body)}`);
  return { project, rootProjectId: project.live.project_id, owner, ownerEmail };
}

/** A person invited by `owner` with `role`, signed in. */
export async function invited(owner: Browser, role: string): Promise<{ browser: Browser; email: string }> {
  const email = uniqueEmail(role);
  const invitation = await owner.post("/dashboard/invitations", { email, role });
  if (invitation.status !== 200) throw new Error(`invite: ${JSON.stringify(invitation.body)}`);
  const browser = new Browser(owner.url);
  const accepted = await browser.post("/dashboard/accept", {
    token: tokenOf(invitation.body.link),
    password: PASSWORD,
  });
  if (accepted.status !== 200) throw new Error(`accept: ${JSON.stringify(accepted.body)}`);
  return { browser, email };
}

/** The code of `secret` (base32) at `at`, as an authenticator app computes it. */
export function totpCode(secret: string, at: Date = new Date()): string {
  return new TOTP({ secret, algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: at.getTime() });
}

/** Enrols TOTP for the signed-in `browser` and answers the secret; the session is then `done`. */
export async function enrolTotp(browser: Browser, at: Date = new Date()): Promise<string> {
  const started = await browser.post("/dashboard/totp");
  if (started.status !== 200) throw new Error(`totp: ${JSON.stringify(started.body)}`);
  const confirmed = await browser.post("/dashboard/totp/confirm", {
    code: totpCode(started.body.secret, at),
  });
  if (confirmed.status !== 200) throw new Error(`confirm: ${JSON.stringify(confirmed.body)}`);
  return started.body.secret;
}
