import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request, type Server } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  close,
  createLocalApi,
  listen,
  MAX_REQUEST_BODY_BYTES,
  MAX_REQUEST_HEADER_BYTES,
} from "../../lib/local/http-server.ts";
import { repoRoot } from "../../lib/local/paths.ts";
import { processIsAlive } from "../../lib/local/stack-file.ts";
import { api, type RunningStack, startStack } from "./harness.ts";

/**
 * `npm start` as a developer runs it: its own DynamoDB Local keeping data in DATA_DIR, a project
 * created on first start, and everything still there after a restart.
 */
const run = promisify(execFile);
const CREDENTIALS_SHAPE = {
  sandbox: {
    project_id: expect.stringMatching(/^test-proj_/),
    private_key: expect.stringMatching(/^key_sandbox_/),
  },
  live: { project_id: expect.stringMatching(/^proj_/), private_key: expect.stringMatching(/^key_live_/) },
};

let dataDir: string;
let stack: RunningStack | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "local-stack-test-"));
});

afterAll(async () => {
  await stack?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function readJson(file: string) {
  return JSON.parse(await readFile(join(dataDir, file), "utf8"));
}

describe("the local stack (npm start)", () => {
  let firstCredentials: unknown;
  let customerId: string;
  let cliProject: { sandbox: { project_id: string; private_key: string } };
  let dynamodbPid: number;

  it("starts on first run with its own DynamoDB Local, creates a project and writes credentials.json", async () => {
    stack = await startStack({ dataDir, dynamodb: "own" });

    const readyLines = stack.output().match(/^listening on http:\/\/localhost:\d+$/gm);
    expect(readyLines).toEqual([`listening on ${stack.url}`]);
    const text = await readFile(join(dataDir, "credentials.json"), "utf8");
    firstCredentials = JSON.parse(text);
    expect(firstCredentials).toEqual(CREDENTIALS_SHAPE);
    expect(Object.keys(firstCredentials as object)).toEqual(["sandbox", "live"]);
    expect(text).toBe(`${JSON.stringify(firstCredentials, null, 2)}\n`);
    expect(stack.output()).toContain((firstCredentials as typeof CREDENTIALS_SHAPE).sandbox.private_key);

    const running = await readJson("local-stack.json");
    expect(running).toMatchObject({ api_url: stack.url, table_name: "payment-api-local" });
    dynamodbPid = running.dynamodb_pid;
    expect(processIsAlive(dynamodbPid)).toBe(true);
  });

  it("answers an unknown route with a JSON 404", async () => {
    const { status, headers, body } = await api(stack?.url as string).get("/no/such/route?x=1");
    expect(status).toBe(404);
    expect(headers.get("content-type")).toContain("application/json");
    expect(body).toMatchObject({ success: false, error_type: "request.route.not-found" });
  });

  it("serves the handlers with the printed sandbox credentials", async () => {
    const sandbox = api(stack?.url as string, stack?.credentials.sandbox);
    const { status, body } = await sandbox.post("/customers", { first_name: "Persisted" }, { form: true });
    expect(status).toBe(200);
    customerId = body.customer.id;
  });

  it("serves the OpenAPI document with its own address, the reference page, and the page's files", async () => {
    const client = api(stack?.url as string);
    const document = await client.get("/openapi.json");
    expect(document.status).toBe(200);
    expect(document.body).toMatchObject({
      openapi: expect.stringMatching(/^3\.1\./),
      servers: [{ url: stack?.url }],
    });
    expect((await client.get("/docs")).text).toContain('src="docs/swagger-ui-bundle.js"');
    const script = await fetch(`${stack?.url}/docs/swagger-ui-bundle.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-encoding")).toBe("gzip");
    expect(await script.text()).toContain("SwaggerUIBundle");
  });

  it("creates a working project with `npm run project -- create` against the running stack", async () => {
    const { stdout } = await run(
      process.execPath,
      [join(repoRoot, "node_modules/tsx/dist/cli.mjs"), "bin/project.ts", "create", "--name", "x"],
      { cwd: repoRoot, env: { ...process.env, DATA_DIR: dataDir, TABLE_NAME: "" } },
    );
    cliProject = JSON.parse(stdout);
    expect(cliProject).toEqual(CREDENTIALS_SHAPE);
    expect(stdout).toBe(`${JSON.stringify(cliProject, null, 2)}\n`);
    const { status } = await api(stack?.url as string, cliProject.sandbox).get("/customers");
    expect(status).toBe(200);
  });

  it("makes the first dashboard owner and a one-time sign-in link on the stack's address with --owner-email", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        join(repoRoot, "node_modules/tsx/dist/cli.mjs"),
        "bin/project.ts",
        "create",
        "--name",
        "y",
        "--owner-email",
        "First.Owner@example.com",
      ],
      { cwd: repoRoot, env: { ...process.env, DATA_DIR: dataDir, TABLE_NAME: "" } },
    );
    const { owner, ...credentials } = JSON.parse(stdout);
    expect(credentials).toEqual(CREDENTIALS_SHAPE);
    expect(owner).toEqual({
      user_id: expect.stringMatching(/^user_/),
      email: "first.owner@example.com",
      role: "owner",
      sign_in_link: expect.stringMatching(
        new RegExp(`^${stack?.url}/dashboard#/accept\\?token=[A-Za-z0-9_-]{43}$`),
      ),
      expires_at: expect.any(String),
    });
    const token = String(owner.sign_in_link).split("token=")[1];
    const accepted = await fetch(`${stack?.url}/dashboard/accept`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, password: "correct horse battery staple" }),
    });
    expect(accepted.status).toBe(200);
    const answer = (await accepted.json()) as { session: { environments: { live: string } } };
    expect(answer.session.environments.live).toBe(credentials.live.project_id);
  });

  it("exits 0 on SIGTERM, stops Java and removes local-stack.json", async () => {
    const status = await stack?.stop("SIGTERM");
    stack = undefined;
    expect(status).toEqual({ code: 0, signal: null });
    expect(processIsAlive(dynamodbPid)).toBe(false);
    expect(existsSync(join(dataDir, "local-stack.json"))).toBe(false);
  });

  it("restarts on the same DATA_DIR with the same credentials and the data still there", async () => {
    stack = await startStack({ dataDir, dynamodb: "own" });

    expect(await readJson("credentials.json")).toEqual(firstCredentials);
    expect(stack.credentials).toEqual(firstCredentials);
    expect(stack.output()).toMatch(/Reusing/);
    const sandbox = api(stack.url, stack.credentials.sandbox);
    const { status, body } = await sandbox.get(`/customers/${customerId}`);
    expect(status).toBe(200);
    expect(body.customer.first_name).toBe("Persisted");
    expect((await api(stack.url, cliProject.sandbox).get("/customers")).status).toBe(200);
  });
});

describe("the local API Gateway (createLocalApi)", () => {
  const fixtures: Record<string, string> = {
    echo: `export const handler = async (event, context) => ({
      statusCode: 200,
      headers: { "content-type": "application/json", "x-multi": 7 },
      body: JSON.stringify({ event, context: { ...context, remaining: context.getRemainingTimeInMillis() } }),
    });`,
    boom: `export const handler = async () => { throw new Error("secret failure detail"); };`,
    invalid: `export const handler = async () => ({ statusCode: "soon", body: {} });`,
    plain: `export const handler = async () => ({ hello: "world" });`,
    binary: `export const handler = async () => ({
      statusCode: 201,
      headers: { "content-type": "application/octet-stream" },
      cookies: ["a=1; Path=/", "b=2"],
      isBase64Encoded: true,
      body: Buffer.from([0, 1, 2, 255]).toString("base64"),
    });`,
    callback: `export const handler = (event, context, callback) => {
      setTimeout(() => callback(null, { statusCode: 202, body: "later" }), 5);
    };`,
  };
  const testRoutes = [
    { method: "POST", path: "/things/{thing_id}/parts/{part}", handler: "echo", table: "read" },
    { method: "GET", path: "/things/{thing_id}", handler: "echo", table: "read" },
    { method: "GET", path: "/things/special", handler: "plain", table: "read" },
    { method: "GET", path: "/boom", handler: "boom", table: "read" },
    { method: "GET", path: "/invalid", handler: "invalid", table: "read" },
    { method: "GET", path: "/binary", handler: "binary", table: "read" },
    { method: "GET", path: "/callback", handler: "callback", table: "read" },
  ] as const;
  let fixtureRoot: string;
  let server: Server;
  let base: string;
  const errors: string[] = [];

  beforeAll(async () => {
    fixtureRoot = await mkdtemp(join(tmpdir(), "local-api-fixtures-"));
    await mkdir(join(fixtureRoot, "functions"));
    for (const [name, code] of Object.entries(fixtures)) {
      await writeFile(join(fixtureRoot, "functions", `${name}.ts`), code);
    }
    server = createLocalApi({
      routes: testRoutes,
      fallbackHandler: "echo",
      rootDir: fixtureRoot,
      errorLog: (message) => errors.push(message),
    });
    base = `http://localhost:${await listen(server, 0)}`;
  });

  afterAll(async () => {
    await close(server);
    await rm(fixtureRoot, { recursive: true, force: true });
  });

  async function echo(path: string, init?: RequestInit) {
    const response = await fetch(`${base}${path}`, init);
    expect(response.status).toBe(200);
    return (await response.json()) as { event: APIGatewayProxyEventV2; context: Record<string, unknown> };
  }

  it("turns a request into the payload 2.0 event API Gateway sends, with a Lambda-like context", async () => {
    const headers = {
      "content-type": "application/json",
      cookie: "session=abc; theme=dark",
      "user-agent": "test-agent",
    };
    const { event, context } = await echo("/things/a%20b/parts/p1?x=1&x=2&y=%7Bz%7D&flag", {
      method: "POST",
      headers,
      body: '{"amount":"1.00"}',
    });

    expect(event).toMatchObject({
      version: "2.0",
      routeKey: "POST /things/{thing_id}/parts/{part}",
      rawPath: "/things/a%20b/parts/p1",
      rawQueryString: "x=1&x=2&y=%7Bz%7D&flag",
      cookies: ["session=abc", "theme=dark"],
      queryStringParameters: { x: "1,2", y: "{z}", flag: "" },
      pathParameters: { thing_id: "a b", part: "p1" },
      body: '{"amount":"1.00"}',
      isBase64Encoded: false,
      requestContext: {
        accountId: expect.any(String),
        apiId: expect.any(String),
        domainName: "localhost",
        domainPrefix: "localhost",
        http: {
          method: "POST",
          path: "/things/a%20b/parts/p1",
          protocol: "HTTP/1.1",
          sourceIp: expect.stringMatching(/^(127\.0\.0\.1|::1)$/),
          userAgent: "test-agent",
        },
        requestId: expect.any(String),
        routeKey: "POST /things/{thing_id}/parts/{part}",
        stage: "$default",
        time: expect.stringMatching(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/),
        timeEpoch: expect.any(Number),
      },
    });
    expect(event.headers["content-type"]).toBe("application/json");
    expect(event.headers.cookie).toBeUndefined();
    expect(context).toMatchObject({
      awsRequestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      functionName: expect.stringContaining("Echo"),
      functionVersion: "$LATEST",
      memoryLimitInMB: expect.any(String),
      invokedFunctionArn: expect.stringMatching(/^arn:aws:lambda:/),
      logGroupName: expect.stringMatching(/^\/aws\/lambda\//),
      callbackWaitsForEmptyEventLoop: true,
    });
    expect(context.remaining).toBeGreaterThan(0);
  });

  it("joins repeated header lines with commas, as API Gateway does", async () => {
    // fetch folds repeated headers into one line itself; node:http sends an array as separate lines.
    const text = await new Promise<string>((done, fail) => {
      request(`${base}/things/t`, { headers: { "x-dup": ["one", "two"] } }, (response) => {
        let data = "";
        response.on("data", (chunk: Buffer) => {
          data += chunk.toString("utf8");
        });
        response.on("end", () => done(data));
      })
        .on("error", fail)
        .end();
    });
    expect(JSON.parse(text).event.headers["x-dup"]).toBe("one,two");
  });

  it("base64-encodes form and other non-text bodies, and passes text bodies as they are", async () => {
    const form = await echo("/things/t/parts/p", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "a[b]=c&d=%C3%A9",
    });
    expect(form.event.isBase64Encoded).toBe(true);
    expect(Buffer.from(form.event.body as string, "base64").toString("utf8")).toBe("a[b]=c&d=%C3%A9");

    const text = await echo("/things/t/parts/p", {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "héllo",
    });
    expect(text.event).toMatchObject({ isBase64Encoded: false, body: "héllo" });

    const empty = await echo("/things/t");
    expect(empty.event.body).toBeUndefined();
    expect(empty.event.queryStringParameters).toBeUndefined();
    expect(empty.event.rawQueryString).toBe("");
  });

  it("routes literal segments before parameters, and anything unmatched to the $default route", async () => {
    expect(await (await fetch(`${base}/things/special`)).json()).toEqual({ hello: "world" });
    expect((await echo("/things/other")).event.routeKey).toBe("GET /things/{thing_id}");
    for (const path of ["/things/", "/things", "/things/a/b", "/unknown"]) {
      const { event } = await echo(path);
      expect(event.routeKey).toBe("$default");
      expect(event.pathParameters).toBeUndefined();
    }
    const wrongMethod = await echo("/things/x", { method: "DELETE" });
    expect(wrongMethod.event.routeKey).toBe("$default");
  });

  it("answers a throwing or invalid handler with a JSON 500 that leaks nothing, and keeps serving", async () => {
    for (const path of ["/boom", "/invalid"]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(500);
      const body = await response.json();
      expect(body).toMatchObject({ success: false, error_type: "internal", message: expect.any(String) });
      expect(JSON.stringify(body)).not.toContain("secret");
    }
    expect(errors.some((line) => line.includes("boom"))).toBe(true);
    expect(errors.some((line) => line.includes("invalid"))).toBe(true);
    expect((await fetch(`${base}/things/special`)).status).toBe(200);
  });

  it("writes back base64 bodies, cookies, callback results and non-structured results as API Gateway does", async () => {
    const binary = await fetch(`${base}/binary`);
    expect(binary.status).toBe(201);
    expect([...new Uint8Array(await binary.arrayBuffer())]).toEqual([0, 1, 2, 255]);
    expect(binary.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2"]);

    const later = await fetch(`${base}/callback`);
    expect(later.status).toBe(202);
    expect(await later.text()).toBe("later");

    const plain = await fetch(`${base}/things/special`);
    expect(plain.headers.get("content-type")).toBe("application/json");
    expect((await echo("/things/x")).event.routeKey).toBe("GET /things/{thing_id}");
  });

  it("refuses bodies over the limit with a JSON 413", async () => {
    const response = await fetch(`${base}/things/t/parts/p`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(MAX_REQUEST_BODY_BYTES + 1),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ success: false, error_type: "request.body.too-large" });
  });

  /** Writes `raw` on a new connection and reads everything the server sends back until it closes. */
  function exchange(raw: string): Promise<{ status: number; headers: string; body: string }> {
    return new Promise((done, fail) => {
      const socket = connect(Number(new URL(base).port), "127.0.0.1");
      const chunks: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("error", fail);
      socket.on("close", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const [head = "", body = ""] = text.split("\r\n\r\n", 2);
        done({ status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body });
      });
      socket.end(raw);
    });
  }

  it.each([
    [
      "a query string over 16 KB",
      `GET /things/x?q=${"a".repeat(MAX_REQUEST_HEADER_BYTES)} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
      431,
      "request.headers.too-large",
    ],
    ["a request line that is not HTTP", "GARBAGE\r\n\r\n", 400, "request.malformed"],
    [
      "a header name with a space",
      "GET /things/x HTTP/1.1\r\nHost: localhost\r\nBad Header: 1\r\n\r\n",
      400,
      "request.malformed",
    ],
    [
      "a malformed chunked body",
      "POST /things/t/parts/p HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      400,
      "request.malformed",
    ],
    [
      "an expectation other than 100-continue",
      "GET /things/x HTTP/1.1\r\nHost: localhost\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n",
      417,
      "request.expectation.unsupported",
    ],
    [
      "a CONNECT request",
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
      405,
      "request.method.not-allowed",
    ],
  ])("answers %s with the JSON error shape, never an empty body", async (_, raw, status, errorType) => {
    const logged = errors.length;
    const answer = await exchange(raw);
    expect(errors.slice(logged)).toEqual([]);
    expect(answer.status).toBe(status);
    expect(answer.headers).toContain("content-type: application/json");
    expect(JSON.parse(answer.body)).toEqual({
      success: false,
      error_type: errorType,
      message: expect.any(String),
    });
  });

  it("still answers after refusing malformed requests", async () => {
    await exchange("GARBAGE\r\n\r\n");
    expect((await fetch(`${base}/things/special`)).status).toBe(200);
  });
});

/**
 * `npm start` as the child of a process that never reaps its children (a container's PID 1 that reaps
 * nothing, a supervisor): once killed, the stack stays a zombie, which `kill(pid, 0)` still reaches.
 * Resolves with the stack's pid once it listens.
 */
async function startUnreapedStack(dataDir: string): Promise<{ pid: number; release(): void }> {
  const parent = spawn(
    "sh",
    ["-c", '"$0" --import tsx lib/local/start.ts & exec sleep 300', process.execPath],
    {
      cwd: repoRoot,
      env: {
        ...process.env,
        PORT: "0",
        DATA_DIR: dataDir,
        DYNAMODB_ENDPOINT: inject("dynamodbEndpoint"),
        TABLE_NAME: inject("tableName"),
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const release = () => parent.kill("SIGKILL");
  try {
    await new Promise<void>((done, fail) => {
      let output = "";
      parent.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString("utf8");
        if (/^listening on /m.test(output)) done();
      });
      parent.once("exit", () => fail(new Error(`The stack did not start:\n${output}`)));
    });
    const { pid } = JSON.parse(await readFile(join(dataDir, "local-stack.json"), "utf8")) as { pid: number };
    return { pid, release };
  } catch (error) {
    release();
    throw error;
  }
}

describe.runIf(process.platform === "linux")("a restart right after kill -9", () => {
  let restarted: RunningStack | undefined;
  let unreaped: { pid: number; release(): void } | undefined;
  let killedDataDir: string | undefined;

  afterAll(async () => {
    await restarted?.stop();
    unreaped?.release();
    if (killedDataDir) await rm(killedDataDir, { recursive: true, force: true });
  });

  it("starts on the same DATA_DIR: the killed stack, a zombie still, is not taken for a running one", async () => {
    killedDataDir = await mkdtemp(join(tmpdir(), "local-stack-kill-"));
    unreaped = await startUnreapedStack(killedDataDir);
    process.kill(unreaped.pid, "SIGKILL");
    // A killed process becomes a zombie once the kernel has torn it down: on a loaded machine that
    // takes longer than 100 ms.
    const pid = unreaped.pid;
    const state = async () => (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]?.[0];
    await expect.poll(state, { timeout: 10_000, interval: 100 }).toBe("Z");

    restarted = await startStack({ dataDir: killedDataDir });
    const running = JSON.parse(await readFile(join(killedDataDir, "local-stack.json"), "utf8"));
    expect(running.pid).not.toBe(unreaped.pid);
    expect((await api(restarted.url, restarted.credentials.sandbox).get("/customers")).status).toBe(200);
  });
});
