import { api } from "../../shared/http/api.ts";
import { answerChallenge } from "../../shared/payments/challenge.ts";
import { challengeNotFoundPage } from "../../shared/three-d-s/pages.ts";

/** POST /3ds/{token}: records the shopper's answer to the sandbox 3DS challenge, once. */
export const handler = api(
  (request) =>
    answerChallenge(request.path.token ?? "", request.body, request.headers["sec-fetch-dest"] === "iframe"),
  { auth: "none", notFound: challengeNotFoundPage },
);
