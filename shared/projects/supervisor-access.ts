import type { Caller } from "../http/auth.ts";
import { invalidField } from "../http/errors.ts";

/**
 * Whether a supervised project lets its supervisor read its data with the supervisor's own key
 * (`PUT /projects/{id}` with `supervisor_access`, the child's own key): `none` (the default) or
 * `read`. With `read`, HTTP Basic with the child's project id and the supervisor environment's
 * private key authenticates as a read-only caller (`supervisor-key`, `shared/http/auth.ts`): GET
 * requests only; anything else is refused. The child takes it back at any time (other containers
 * follow within their 30-second environment cache).
 */
export const SUPERVISOR_ACCESS = ["none", "read"] as const;
export type SupervisorAccess = (typeof SUPERVISOR_ACCESS)[number];

/** Only a supervised project has a supervisor to allow; only its own key may change it. */
export function checkSupervisorAccess(caller: Caller & { credential?: string }): void {
  if (!caller.environment.supervisor_project_id) {
    throw invalidField("supervisor_access", "only a supervised project has a supervisor to allow");
  }
  if (caller.credential === "supervisor-key") {
    throw invalidField("supervisor_access", "is the project's own to set, with its own key");
  }
}

export const supervisorAccessTitle = (access: SupervisorAccess) =>
  access === "read"
    ? "Supervisor allowed to read this project's data"
    : "Supervisor's read access taken back";
