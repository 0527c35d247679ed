import { createHash } from "node:crypto";

/**
 * The API reference page (`GET /docs`): Swagger UI, from the files `GET /docs/{docs_file}` serves,
 * rendering `GET /openapi.json`. Links are relative, so the page works under any base path. Its
 * one inline script is allowed by its hash: the Content-Security-Policy lets the page load its own
 * files and nothing from anywhere else.
 */
const SCRIPT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});`;

const scriptHash = createHash("sha256").update(SCRIPT).digest("base64");

export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payment API reference</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script>${SCRIPT}</script>
</body>
</html>
`;

/**
 * Its own files, its hashed script, the document it renders (fetched) and the images of its style
 * sheet (`data:` URIs); nothing else, and no framing. (Swagger UI sets element styles through the
 * DOM, which `style-src` does not govern: no inline style sheet is needed.)
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${scriptHash}'`,
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");
