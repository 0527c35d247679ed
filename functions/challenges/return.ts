import { api } from "../../shared/http/api.ts";
import { returnFromProvider } from "../../shared/payments/challenge.ts";
import { challengeNotFoundPage } from "../../shared/three-d-s/pages.ts";

/** GET /3ds/{token}/return: where a provider's 3DS page sends the cardholder back (no credentials). */
export const handler = api(
  (request) =>
    returnFromProvider(
      request.path.token ?? "",
      request.query,
      request.headers["sec-fetch-dest"] === "iframe",
    ),
  { auth: "none", notFound: challengeNotFoundPage },
);
