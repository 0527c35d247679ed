import { api } from "../../shared/http/api.ts";
import { showFingerprint } from "../../shared/payments/challenge.ts";
import { challengeNotFoundPage } from "../../shared/three-d-s/pages.ts";

/** GET /3ds/{token}/fingerprint: the browser's sandbox 3DS method page (no credentials). */
export const handler = api((request) => showFingerprint(request.path.token ?? ""), {
  auth: "none",
  notFound: challengeNotFoundPage,
});
