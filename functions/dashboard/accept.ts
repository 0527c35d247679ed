import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { accept } from "../../shared/dashboard/links.ts";
import { checkPassword, hashPassword } from "../../shared/dashboard/passwords.ts";
import { signedIn } from "../../shared/dashboard/sign-in.ts";
import { hasSecondFactor } from "../../shared/dashboard/users.ts";
import { invalidField } from "../../shared/http/errors.ts";

/**
 * POST /dashboard/accept {token, password}: an invitation's or a sign-in link's token sets the
 * person's password (at least 12 characters) and signs them in; the token is used up.
 */
export const handler = dashboardRoute(async (request) => {
  const { token } = request.body;
  if (typeof token !== "string") throw invalidField("token", "is required: the token of the link");
  const password = checkPassword(request.body.password);
  const user = await accept(token, await hashPassword(password), request.now);
  return signedIn(request, user, hasSecondFactor(user) ? "required" : "not-enrolled", "link.accepted");
});
