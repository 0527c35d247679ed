import { api } from "../../shared/http/api.ts";
import { showChallenge } from "../../shared/payments/challenge.ts";
import { challengeNotFoundPage } from "../../shared/three-d-s/pages.ts";

/** GET /3ds/{token}: the sandbox 3DS challenge page (no credentials: the token is the secret). */
export const handler = api((request) => showChallenge(request.path.token ?? ""), {
  auth: "none",
  notFound: challengeNotFoundPage,
});
