import { api } from "../../shared/http/api.ts";
import { serveAsset } from "../../shared/http/assets.ts";

/** GET /assets/{asset}: the scripts served to browsers (the payments module, the checkout page's). */
export const handler = api((request) => serveAsset(request.path.asset ?? ""), { auth: "none" });
