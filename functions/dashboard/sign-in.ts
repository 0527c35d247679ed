import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { signInWithPassword } from "../../shared/dashboard/sign-in.ts";

/** POST /dashboard/sign-in {email, password}: the session cookie; the second factor next if the person has one. */
export const handler = dashboardRoute(signInWithPassword);
