/**
 * The dashboard's one page (`GET /dashboard`): an empty shell that loads the app built from
 * `shared/browser/dashboard/` (`/assets/dashboard.js` and `/assets/dashboard.css`). Every screen is a
 * hash route (`#/payments`, `#/accept?token=…`), so this one route serves them all and a link's token
 * never reaches a server log. Links are relative, so the page works under any base path.
 *
 * The Content-Security-Policy allows the page's own files and calls to its own origin, nothing
 * else: no inline script or style sheet (element styles the app and uPlot set through the DOM are
 * not governed by `style-src`), no third-party asset, no framing.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>Dashboard</title>
<link rel="stylesheet" href="assets/dashboard.css">
<script type="module" src="assets/dashboard.js"></script>
</head>
<body>
<div id="app"><noscript>The dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;

export const DASHBOARD_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");
