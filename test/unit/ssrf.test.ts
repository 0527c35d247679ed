import { createServer, type IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../lib/local/dynamodb-local.ts";
import { close, listen } from "../../lib/local/http-server.ts";
import { postWebhook, RESPONSE_BODY_LIMIT } from "../../shared/webhooks/http-post.ts";
import {
  addressRange,
  checkWebhookUrl,
  type Resolver,
  type WebhookUrlPolicy,
} from "../../shared/webhooks/url-policy.ts";

const LIVE: WebhookUrlPolicy = { requireHttps: true, allowPrivateNetwork: false };
const DEPLOYED_SANDBOX: WebhookUrlPolicy = { requireHttps: false, allowPrivateNetwork: false };
const LOCAL_SANDBOX: WebhookUrlPolicy = { requireHttps: false, allowPrivateNetwork: true };

/** A DNS that answers from a table (and fails for any other name), so no test depends on the network. */
const dns =
  (answers: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = answers[hostname];
    if (!addresses) throw Object.assign(new Error(`no such host ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

describe("addressRange", () => {
  it.each([
    ["93.184.215.14", "public"],
    ["8.8.8.8", "public"],
    ["2606:4700:4700::1111", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["fe80::1", "linkLocal"],
    ["fd00:ec2::254", "uniqueLocal"],
    ["fc00::1", "uniqueLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["224.0.0.1", "multicast"],
    ["203.0.113.5", "reserved"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:169.254.169.254", "linkLocal"],
    ["64:ff9b::a9fe:a9fe", "rfc6052"],
    ["2002:a9fe:a9fe::", "6to4"],
    ["::2", "reserved"],
  ])("%s is %s", (address, range) => {
    expect(addressRange(address)).toBe(range);
  });
});

describe("checkWebhookUrl", () => {
  const resolve = dns({
    "hooks.example.com": ["93.184.215.14"],
    localhost: ["127.0.0.1", "::1"],
    "internal.example.com": ["10.0.0.7"],
    "mixed.example.com": ["93.184.215.14", "169.254.169.254"],
    "metadata.example.com": ["169.254.169.254"],
  });

  it("accepts an https URL whose host resolves to public addresses only, in live mode", async () => {
    const check = await checkWebhookUrl("https://hooks.example.com/webhooks?x=1", LIVE, resolve);
    expect(check).toMatchObject({ allowed: true, addresses: [{ address: "93.184.215.14", family: 4 }] });
    expect(await checkWebhookUrl("https://93.184.215.14/hook", LIVE, resolve)).toMatchObject({
      allowed: true,
    });
    expect(await checkWebhookUrl("https://[2606:4700:4700::1111]/hook", LIVE, resolve)).toMatchObject({
      allowed: true,
      addresses: [{ address: "2606:4700:4700::1111", family: 6 }],
    });
  });

  it.each([
    ["http://hooks.example.com/", "must be an https URL in live mode"],
    ["https://127.0.0.1/", "127.0.0.1, a loopback address"],
    ["https://localhost:8443/", "a loopback address"],
    ["https://[::1]/", "::1, a loopback address"],
    ["https://169.254.169.254/latest/meta-data/", "169.254.169.254, a linkLocal address"],
    ["https://metadata.example.com/", "169.254.169.254, a linkLocal address"],
    ["https://[fd00:ec2::254]/", "a uniqueLocal address"],
    ["https://10.0.0.1/", "a private address"],
    ["https://internal.example.com/", "10.0.0.7, a private address"],
    ["https://[::ffff:169.254.169.254]/", "a linkLocal address"],
    // WHATWG URL parsing turns every IPv4 spelling into dotted quads before the check.
    ["https://2130706433/", "127.0.0.1, a loopback address"],
    ["https://0x7f.1/", "127.0.0.1, a loopback address"],
    ["https://0/", "0.0.0.0, a unspecified address"],
    // One private address among public ones is enough to refuse: the connection could use it.
    ["https://mixed.example.com/", "169.254.169.254, a linkLocal address"],
    ["https://nowhere.example.com/", "could not be resolved (ENOTFOUND)"],
    ["ftp://hooks.example.com/", "must be an http or https URL"],
  ])("refuses %s in live mode (%s)", async (url, reason) => {
    const check = await checkWebhookUrl(url, LIVE, resolve);
    expect(check.allowed).toBe(false);
    expect(check.allowed ? "" : check.reason).toContain(reason);
  });

  it("allows http but no private address for sandbox on a deployed stage", async () => {
    expect(await checkWebhookUrl("http://hooks.example.com/", DEPLOYED_SANDBOX, resolve)).toMatchObject({
      allowed: true,
    });
    for (const url of ["http://127.0.0.1:3000/", "http://169.254.169.254/", "http://internal.example.com/"]) {
      expect((await checkWebhookUrl(url, DEPLOYED_SANDBOX, resolve)).allowed, url).toBe(false);
    }
  });

  it("allows loopback and private receivers for sandbox in the local stack", async () => {
    for (const url of [
      "http://127.0.0.1:3000/",
      "http://localhost:9000/hooks",
      "http://internal.example.com/",
    ]) {
      expect((await checkWebhookUrl(url, LOCAL_SANDBOX, resolve)).allowed, url).toBe(true);
    }
  });
});

describe("credentials in a webhook URL", () => {
  it.each([
    "http://user:secret@127.0.0.1:9000/hooks",
    "https://user@hooks.example.com/",
    "https://:secret@hooks.example.com/",
  ])("are refused, whatever the policy allows otherwise (%s)", async (url) => {
    const check = await checkWebhookUrl(url, LOCAL_SANDBOX, async () => [
      { address: "127.0.0.1", family: 4 },
    ]);
    expect(check).toEqual({ allowed: false, reason: "must not contain a user name or password" });
  });
});

describe("postWebhook", () => {
  let port = 0;
  const received: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  let answer: (path: string) => { status: number; body: string; hang?: boolean } = () => ({
    status: 200,
    body: "ok",
  });
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const path = request.url ?? "";
      received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString() });
      const { status, body, hang } = answer(path);
      if (hang) return;
      response.writeHead(status).end(body);
    });
  });
  beforeAll(async () => {
    port = await listen(server, 0);
  });
  afterAll(async () => {
    await close(server);
  });

  it("connects to the address it checked, not to a second DNS answer", async () => {
    // `receiver.test` resolves nowhere but in the check: the request can only have used the checked address.
    const resolve = dns({ "receiver.test": ["127.0.0.1"] });
    const outcome = await postWebhook(
      `http://receiver.test:${port}/pinned`,
      '{"event_id":"ev_1"}',
      { "x-test": "1" },
      {
        policy: LOCAL_SANDBOX,
        resolve,
      },
    );
    expect(outcome).toMatchObject({ ok: true, statusCode: 200, error: null, responseBody: "ok" });
    const request = received.find((one) => one.path === "/pinned");
    expect(request?.headers.host).toBe(`receiver.test:${port}`);
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.headers["x-test"]).toBe("1");
    expect(request?.body).toBe('{"event_id":"ev_1"}');
  });

  it("refuses at send time a host that now resolves to a private address (DNS rebinding), without connecting", async () => {
    const before = received.length;
    const rebound = dns({ "rebinding.example.com": ["127.0.0.1"] });
    const outcome = await postWebhook(
      `https://rebinding.example.com:${port}/rebound`,
      "{}",
      {},
      {
        policy: LIVE,
        resolve: rebound,
      },
    );
    expect(outcome).toMatchObject({ ok: false, statusCode: null });
    expect(outcome.error).toMatch(
      /^refused: webhook URL must reach a public address: .*127\.0\.0\.1, a loopback/,
    );
    expect(received.length).toBe(before);
  });

  it("refuses at send time a URL with credentials, so the password never reaches the receiver", async () => {
    const before = received.length;
    const outcome = await postWebhook(
      `http://user:secret@127.0.0.1:${port}/with-password`,
      "{}",
      {},
      {
        policy: LOCAL_SANDBOX,
      },
    );
    expect(outcome).toMatchObject({
      ok: false,
      statusCode: null,
      error: "refused: webhook URL must not contain a user name or password",
    });
    expect(received.length).toBe(before);
  });

  it("counts any non-2xx answer as a failure, a 3xx included (redirects are not followed)", async () => {
    answer = (path) => (path === "/moved" ? { status: 302, body: "" } : { status: 503, body: "busy" });
    const resolve = dns({});
    const moved = await postWebhook(
      `http://127.0.0.1:${port}/moved`,
      "{}",
      {},
      { policy: LOCAL_SANDBOX, resolve },
    );
    const busy = await postWebhook(
      `http://127.0.0.1:${port}/busy`,
      "{}",
      {},
      { policy: LOCAL_SANDBOX, resolve },
    );
    expect(moved).toMatchObject({ ok: false, statusCode: 302, error: null });
    expect(busy).toMatchObject({ ok: false, statusCode: 503, responseBody: "busy" });
    answer = () => ({ status: 200, body: "ok" });
  });

  it("keeps at most 1 KiB of the answer", async () => {
    answer = () => ({ status: 200, body: "x".repeat(10 * RESPONSE_BODY_LIMIT) });
    const outcome = await postWebhook(`http://127.0.0.1:${port}/big`, "{}", {}, { policy: LOCAL_SANDBOX });
    expect(outcome.ok).toBe(true);
    expect(outcome.responseBody).toHaveLength(RESPONSE_BODY_LIMIT);
    answer = () => ({ status: 200, body: "ok" });
  });

  it("gives up on a receiver that does not answer in time", async () => {
    answer = () => ({ status: 200, body: "", hang: true });
    const outcome = await postWebhook(
      `http://127.0.0.1:${port}/slow`,
      "{}",
      {},
      {
        policy: LOCAL_SANDBOX,
        timeoutMs: 200,
      },
    );
    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: "timed out after 200 ms" });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(195);
    answer = () => ({ status: 200, body: "ok" });
    server.closeAllConnections();
  });

  it("reports a refused connection as such", async () => {
    const unused = await freePort();
    const outcome = await postWebhook(`http://127.0.0.1:${unused}/`, "{}", {}, { policy: LOCAL_SANDBOX });
    expect(outcome).toMatchObject({ ok: false, statusCode: null });
    expect(outcome.error).toBe("connection refused");
  });
});
