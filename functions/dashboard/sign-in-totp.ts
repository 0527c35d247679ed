import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { signInWithSecondFactor } from "../../shared/dashboard/sign-in.ts";
import { useCode } from "../../shared/dashboard/totp.ts";
import { invalidField } from "../../shared/http/errors.ts";

/**
 * POST /dashboard/sign-in/totp {code}: the second factor after the password. Counted with the
 * password's failures (growing delays, lockout); a code is accepted once. The session is replaced.
 */
export const handler = dashboardRoute((request) =>
  signInWithSecondFactor(request, {
    verify: (_, user) => useCode(user, request.body.code, request.now),
    refused: () => invalidField("code", "is not a valid code now, or was used already", "invalid-code"),
    failure: "wrong or reused TOTP code",
    action: "sign_in.totp",
  }),
);
