import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { startEnrolment } from "../../shared/dashboard/totp.ts";
import { findUser } from "../../shared/dashboard/users.ts";
import { notFound } from "../../shared/http/errors.ts";

/** POST /dashboard/totp: a new TOTP secret and its otpauth URI, shown now only; confirmed with a code. */
export const handler = dashboardRoute(async ({ session }) => {
  const user = await findUser(session.email);
  if (!user) throw notFound("user");
  return { body: await startEnrolment(user) };
});
