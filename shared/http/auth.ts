import { isEnvironmentProjectId, SANDBOX_PROJECT_PREFIX } from "../ids.ts";
import { findEnvironment, type ProjectEnvironment } from "../projects/environment.ts";
import { noteKeyUse } from "../projects/key-use.ts";
import { type ApiKeyRecord, matchingKey } from "../projects/keys.ts";
import { authenticationFailed, unknownProject } from "./errors.ts";

/** Who is calling: one environment of one project. Its id scopes every read and write. */
export interface Caller {
  /** The environment project id (`proj_…` or `test-proj_…`). */
  projectId: string;
  sandbox: boolean;
  environment: ProjectEnvironment;
}

/**
 * The credential a request authenticated with: the `private-key` (server libraries), or the
 * `public-key`, the project id alone (browser and mobile libraries). What a public-key request
 * leaves behind (an `Idempotency-Key`) is kept apart from what private-key requests use. `dashboard`:
 * a person's dashboard session (`shared/dashboard/session-auth.ts`), which may do what their role allows.
 */
export type CredentialKind = "private-key" | "public-key" | "supervisor-key" | "dashboard";

/** Where a request came from, as the activity log records it (`shared/activities`). */
export interface RequestOrigin {
  requestId: string;
  sourceIp: string | null;
  userAgent: string | null;
}

/** A caller authenticated by the HTTP core: the environment, and the credential it was reached with. */
export interface AuthenticatedCaller extends Caller {
  credential: CredentialKind;
  /** The private key's id (`/api-keys`) when a private key opened the request. */
  apiKeyId?: string;
  /** Set by the HTTP core for every API request. */
  origin?: RequestOrigin;
  /** The person, when a dashboard session opened the request: activities record who. */
  user?: { id: string; email: string; role: string };
}

/**
 * `private-key`: HTTP Basic with the project id and its private key (every server call).
 * `public-key`: the project id alone is enough (the client-side operations, `access.ts`); a private
 * key, when one is sent, must still be right, and then makes a private-key caller.
 */
export type AuthMode = "private-key" | "public-key";

export async function authenticate(
  authorization: string | undefined,
  mode: AuthMode,
): Promise<AuthenticatedCaller> {
  const credentials = parseBasic(authorization);
  if (!credentials)
    throw authenticationFailed("Send HTTP Basic credentials: the project id and private key.");
  const { username, password } = credentials;
  if (!isEnvironmentProjectId(username)) throw unknownProject();

  let environment = await findEnvironment(username);
  if (!environment) throw unknownProject();
  if (mode === "private-key" && password === "") {
    throw authenticationFailed(
      "This route needs the private key: the project id alone (the public key) may only tokenize cards and pay invoices.",
    );
  }
  const keyRequired = mode === "private-key" || password !== "";
  let key: ApiKeyRecord | undefined;
  if (keyRequired) {
    key = matchingKey(environment, password);
    // A key created or rolled in another container in the last 30 s is not in this one's copy yet.
    const stored = key ? undefined : await readAgain(username);
    if (stored) {
      environment = stored;
      key = matchingKey(stored, password);
    }
  }
  if (keyRequired && !key) {
    // A supervised project that allows it is read with its supervisor's own key (GET only: api.ts).
    if (!(await supervisorMayRead(environment, password))) throw authenticationFailed();
    if (environment.sandbox !== username.startsWith(SANDBOX_PROJECT_PREFIX)) throw authenticationFailed();
    return {
      projectId: environment.id,
      sandbox: environment.sandbox,
      environment,
      credential: "supervisor-key",
    };
  }
  // The environment comes from the stored record; the id prefix must agree with it.
  if (environment.sandbox !== username.startsWith(SANDBOX_PROJECT_PREFIX)) throw authenticationFailed();
  if (key) noteKeyUse(environment.id, key.id);
  return {
    projectId: environment.id,
    sandbox: environment.sandbox,
    environment,
    credential: keyRequired ? "private-key" : "public-key",
    ...(key ? { apiKeyId: key.id } : {}),
  };
}

/** When each environment was last read again for a key its cached copy did not know. */
const readAgainAt = new Map<string, number>();

/**
 * The stored environment, for a key the cached copy does not know: at most once a second per
 * environment in a container, so wrong keys cannot make every request a read.
 */
async function readAgain(id: string): Promise<ProjectEnvironment | undefined> {
  const now = Date.now();
  if (now - (readAgainAt.get(id) ?? 0) < 1_000) return undefined;
  if (readAgainAt.size >= 1_000) readAgainAt.clear();
  readAgainAt.set(id, now);
  return findEnvironment(id, { fresh: true });
}

function parseBasic(header: string | undefined): { username: string; password: string } | undefined {
  const match = header?.match(/^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return { username: decoded, password: "" };
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Whether `password` is the private key of the supervisor that `environment` lets read its data. */
async function supervisorMayRead(environment: ProjectEnvironment, password: string): Promise<boolean> {
  if (environment.supervisor_access !== "read" || !environment.supervisor_project_id || password === "")
    return false;
  const supervisor = await findEnvironment(environment.supervisor_project_id);
  return supervisor !== undefined && matchingKey(supervisor, password) !== undefined;
}
