/**
 * A merchant's page that calls the API exactly as the official web client library does (its
 * `apiRequest`, `tokenizeCard`, `handleCardActions` and `incrementAuthorizationAmount`, read from
 * its public source): XMLHttpRequest with `Content-Type: application/json`, `API-Version: 1.3.0.0`,
 * `Authorization: Basic base64("<project id>:")`, `X-ProcessOut-JS-Version`, an optional
 * `Idempotency-Key`; the same values again in the query string (`legacyrequest=true&project_id=…`,
 * `x-Authorization=…`); device data in `device` and at the top level; a payment "done" when the
 * answer's `customer_action` is absent or null; a `fingerprint` action in a hidden iframe (10 s), a
 * `url` action in a modal iframe whose page must
 * post `{"namespace":"processout.checkout","action":…}` as a JSON string to its parent. The library
 * itself is not on npm, so the suite cannot load it; this page reproduces what it sends and expects.
 */
export const WEB_LIBRARY_SCRIPT = `
const SCRIPT_VERSION = "1.8.0";
let projectId = "";
let api = "";
window.setUp = (id, url) => { projectId = id; api = url; };

function apiRequest(method, path, data) {
  return new Promise((resolve) => {
    const headers = { "Content-Type": "application/json", "API-Version": "1.3.0.0" };
    const custom = { "ProcessOut-JS-Version": SCRIPT_VERSION };
    headers["Authorization"] = "Basic " + btoa(projectId + ":");
    if (!data) data = {};
    if (data.idempotency_key) { headers["Idempotency-Key"] = data.idempotency_key; delete data.idempotency_key; }
    const query = ["legacyrequest=true&project_id=" + projectId];
    for (const k in headers) query.push("x-" + k + "=" + headers[k]);
    for (const k in custom) { query.push("x-" + k + "=" + custom[k]); headers["X-" + k] = custom[k]; }
    if (method === "get") for (const key in data) query.push(key + "=" + encodeURIComponent(data[key]));
    const request = new XMLHttpRequest();
    request.open(method, api + "/" + path + "?" + query.join("&"), true);
    for (const k in headers) request.setRequestHeader(k, headers[k]);
    request.onload = () => { let parsed; try { parsed = JSON.parse(request.responseText); } catch { parsed = {}; } resolve(parsed); };
    request.onerror = () => resolve({ networkError: request.status });
    request.send(JSON.stringify(data));
  });
}

function injectDeviceData(data) {
  const device = { request_origin: "web", app_color_depth: Number(screen.colorDepth), app_language: navigator.language,
    app_screen_height: screen.height, app_screen_width: screen.width,
    app_timezone_offset: Number(new Date().getTimezoneOffset()), app_java_enabled: false };
  data.device = device;
  for (const key of Object.keys(device)) data[key] = device[key];
  return data;
}

window.tokenize = async (number, month, year, cvc) => {
  const data = injectDeviceData({ contact: {} });
  data.number = number; data.exp_month = String(month); data.exp_year = String(year); data.cvc2 = cvc;
  const answer = await apiRequest("post", "cards", data);
  if (!answer.success) return { error: answer.error_type };
  return { cardId: answer.card.id };
};

/** The library's iframe for an action (a modal for url and redirect, hidden for fingerprint), and its message protocol. */
function handleAction(url, hidden) {
  return new Promise((resolve) => {
    const wrapper = document.createElement("div");
    wrapper.id = hidden ? "processoutjs-fingerprint" : "processoutjs-action-modal";
    if (hidden) wrapper.style.display = "none";
    const iframe = document.createElement("iframe");
    iframe.style.width = "440px"; iframe.style.height = "480px";
    iframe.setAttribute("src", url);
    wrapper.appendChild(iframe);
    document.body.appendChild(wrapper);
    window.addEventListener("message", function listener(event) {
      let message;
      try { message = JSON.parse(event.data); } catch { return; }
      if (!message || message.namespace !== "processout.checkout") return;
      window.removeEventListener("message", listener);
      wrapper.remove();
      resolve(message);
    });
  });
}

async function handleCardActions(method, endpoint, resourceId, cardId, options) {
  const payload = injectDeviceData({ authorize_only: options.authorize_only, allow_fallback_to_sale: options.allow_fallback_to_sale,
    capture_amount: options.capture_amount, auto_capture_at: options.auto_capture_at, source: options.gatewayRequestSource || cardId,
    enable_three_d_s_2: true, verify: options.verify, verify_metadata: options.verify_metadata, set_default: options.set_default,
    incremental: options.incremental, preferred_scheme: options.preferred_scheme });
  const answer = await apiRequest(method, endpoint, payload);
  window.answers.push(answer);
  if (!answer.success) return { error: answer.error_type, message: answer.message };
  if (!answer.customer_action) return { success: resourceId };
  const action = answer.customer_action;
  if (action.type === "fingerprint") {
    const timeout = new Promise((resolve) => setTimeout(() => resolve({ timedOut: true }), 10000));
    const message = await Promise.race([handleAction(action.value, true), timeout]);
    const source = message.timedOut
      ? "gway_req_" + btoa(JSON.stringify({ url: action.value, method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: 'threeDSMethodData={"threeDS2FingerprintTimeout":true}' }))
      : message.data;
    return handleCardActions(method, endpoint, resourceId, cardId, { ...options, gatewayRequestSource: source });
  }
  if (action.type !== "url" && action.type !== "redirect") return { error: "processout-js.wrong-type-for-action" };
  const message = await handleAction(action.value, false);
  if (message.action === "success" && action.type === "redirect")
    return handleCardActions(method, endpoint, resourceId, cardId, { ...options, gatewayRequestSource: message.data });
  if (message.action === "success") return handleCardActions(method, endpoint, resourceId, cardId, { ...options, gatewayRequestSource: null });
  if (message.action === "canceled") return { error: "customer.canceled" };
  return { error: message.errorCode || "default", message: message.errorMessage };
}

window.answers = [];
window.makeCardPayment = (invoiceId, cardId, options) =>
  handleCardActions("post", "invoices/" + invoiceId + "/capture", invoiceId, cardId, options || {});
window.makeCardToken = (cardId, customerId, tokenId, options) =>
  handleCardActions("put", "customers/" + customerId + "/tokens/" + tokenId, tokenId, cardId, options || {});
window.makeIncrementalAuthorizationPayment = (invoiceId, cardId, options) =>
  handleCardActions("post", "invoices/" + invoiceId + "/authorize", invoiceId, cardId, { ...(options || {}), incremental: true });
window.incrementAuthorizationAmount = async (invoiceId, amount) => {
  const answer = await apiRequest("post", "invoices/" + invoiceId + "/increment_authorization", { amount });
  return answer.success ? { success: true } : { error: "request.validation.error" };
};
`;
