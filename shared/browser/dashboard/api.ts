/**
 * The dashboard's calls: same-origin `fetch` with the session cookie (never an Authorization
 * header), the environment chosen in `X-Environment`, and the session's CSRF token on every change.
 * Paths are relative (`transactions`), so the page works under any base path.
 */

export type Environment = "sandbox" | "live";
export type Role = "owner" | "developer" | "support" | "read-only";

export interface Session {
  id: string;
  expires_at: string;
  second_factor: "required" | "done" | "not-enrolled";
  csrf_token: string;
  role: Role;
  project_id: string;
  environments: { sandbox: string; live: string };
}

export interface User {
  id: string;
  email: string;
  role?: Role;
  [field: string]: unknown;
}

export interface SignedIn {
  user: User;
  session: Session;
}

/** An answer the API refused, with its message (and the fields it names) to show as it is. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly fields: { name: string; message: string }[] = [],
  ) {
    super(message);
  }
}

const state = { csrf: "", environment: "sandbox" as Environment };

export function useSession(session: Session | null): void {
  state.csrf = session?.csrf_token ?? "";
}

export function setEnvironment(environment: Environment): void {
  state.environment = environment;
}

export const environment = () => state.environment;

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field by each page.
export type Json = Record<string, any>;

export async function call(method: string, path: string, body?: unknown): Promise<Json> {
  const headers: Record<string, string> = { accept: "application/json", "x-environment": state.environment };
  if (method !== "GET") {
    headers["x-csrf-token"] = state.csrf;
    if (method === "POST") headers["idempotency-key"] = crypto.randomUUID();
  }
  if (body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, "network", "The API could not be reached: check the connection and try again.");
  }
  const answer = (await response.json().catch(() => null)) as Json | null;
  if (!response.ok || !answer || answer.success === false) {
    throw new ApiError(
      response.status,
      answer?.error_type ?? "unknown",
      answer?.message ?? `The API answered ${response.status}.`,
      answer?.invalid_fields ?? [],
    );
  }
  return answer;
}

export const get = (path: string) => call("GET", path);
export const post = (path: string, body: unknown = {}) => call("POST", path, body);
export const put = (path: string, body: unknown) => call("PUT", path, body);
export const del = (path: string) => call("DELETE", path);

/** An error's message as shown to the user, with the fields it names. */
export function describe(error: unknown): string {
  if (error instanceof ApiError) {
    const fields = error.fields.map((field) => `${field.name}: ${field.message}`).join("; ");
    return fields ? `${error.message} (${fields})` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** What each role may change (reads are everyone's), as the API decides it: to hide what would be refused. */
const ALLOWED: Record<string, readonly Role[]> = {
  payments: ["owner", "support"],
  subscriptions: ["owner", "support"],
  webhooks: ["owner", "support"],
  developers: ["owner", "developer"],
  team: ["owner"],
};

export const may = (role: Role | undefined, area: keyof typeof ALLOWED) =>
  role !== undefined && (ALLOWED[area] ?? []).includes(role);
