import { dashboardRoute } from "../../shared/dashboard/http.ts";
import { verifyPasskey } from "../../shared/dashboard/passkeys.ts";
import { signInWithSecondFactor } from "../../shared/dashboard/sign-in.ts";
import { invalidField } from "../../shared/http/errors.ts";

/** POST /dashboard/sign-in/passkey {credential}: the second factor by passkey; the session is replaced. */
export const handler = dashboardRoute((request) =>
  signInWithSecondFactor(request, {
    verify: (withSession, user) => verifyPasskey(withSession, user, request.body.credential),
    refused: () => invalidField("credential", "could not be verified", "invalid-credential"),
    failure: "passkey not verified",
    action: "sign_in.passkey",
  }),
);
