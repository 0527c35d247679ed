import type { Context } from "aws-lambda";
import { afterEach, describe, expect, it, vi } from "vitest";
import { lambdaContext } from "../../lib/local/lambda.ts";
import { sandboxConnector } from "../../shared/gateways/sandbox/gateway.ts";
import { api as httpCore } from "../../shared/http/api.ts";
import { ok } from "../../shared/http/reply.ts";
import { findEnvironment } from "../../shared/projects/environment.ts";
import { createProject } from "../../shared/projects/project.ts";
import { advanceClock, JOB_RESERVE_MS } from "../../shared/sandbox/clock.ts";
import { api, type Client, useInProcessApi } from "../e2e/harness.ts";

/**
 * Issue 25: the sandbox clock's advance within its time budget, one advance at a time, and jobs
 * another runner did reported as such. Each test has an environment (and so a clock) of its own.
 */
const local = useInProcessApi("Sandbox clock test");

afterEach(() => {
  vi.restoreAllMocks();
});

const DAY = 24 * 3600 * 1000;

interface Environment {
  client: Client;
  scope: string;
}

async function environment(): Promise<Environment> {
  const project = await createProject("Sandbox clock");
  return { client: api(local.url, project.sandbox), scope: project.sandbox.project_id };
}

async function clockNow(env: Environment): Promise<number> {
  return Date.parse((await env.client.get("/sandbox/clock")).body.clock.now);
}

/** `count` customers, each subscribed with a card to a daily plan without trial (charged at once). */
async function dailySubscriptions(env: Environment, count: number): Promise<string[]> {
  await env.client.post("/plans", {
    id: "daily",
    name: "Daily",
    amount: "1.00",
    currency: "EUR",
    interval: "1d",
  });
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const customer = (await env.client.post("/customers", { first_name: `Daily ${index}` })).body.customer;
    const card = (
      await env.client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })
    ).body.card;
    const created = await env.client.post("/subscriptions", {
      customer_id: customer.id,
      plan_id: "daily",
      source: card.id,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    ids.push(created.body.subscription.id);
  }
  return ids;
}

/** Per subscription, the iterations its paid invoices were made for, in order. */
async function paidIterations(env: Environment): Promise<Map<string, number[]>> {
  const paid = new Map<string, number[]>();
  let after: string | undefined;
  for (;;) {
    const { body } = await env.client.get(
      `/invoices?limit=100&order=asc${after ? `&start_after=${after}` : ""}`,
    );
    for (const invoice of body.invoices) {
      if (!invoice.subscription_id || !invoice.transaction_id) continue;
      const transaction = (await env.client.get(`/transactions/${invoice.transaction_id}`)).body.transaction;
      if (transaction.status !== "completed") continue;
      const list = paid.get(invoice.subscription_id) ?? [];
      list.push(Number(invoice.metadata.subscription_iteration));
      paid.set(invoice.subscription_id, list);
    }
    if (!body.has_more) return paid;
    after = body.invoices.at(-1).id;
  }
}

/**
 * An authorization with `auto_capture_at` a day on, and the merchant's own capture of it sent now
 * and held at the provider for `holdMs` (started 100 ms before this returns).
 */
async function merchantCapturing(holdMs: number) {
  const env = await environment();
  const card = (
    await env.client.post("/cards", { number: "4242424242424242", exp_month: 12, exp_year: 2099 })
  ).body.card;
  const invoice = (await env.client.post("/invoices", { name: "Order", amount: "10.00", currency: "EUR" }))
    .body.invoice;
  const captureAt = (await clockNow(env)) + DAY;
  await env.client.post(`/invoices/${invoice.id}/authorize`, {
    source: card.id,
    auto_capture_at: new Date(captureAt).toISOString(),
  });
  const capture = sandboxConnector.capture.bind(sandboxConnector);
  const calls = vi.spyOn(sandboxConnector, "capture").mockImplementation(async (request) => {
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    return capture(request);
  });
  const merchantCapture = env.client.post(`/invoices/${invoice.id}/capture`, {});
  await new Promise((resolve) => setTimeout(resolve, 100));
  return { env, captureAt, merchantCapture, calls };
}

describe("a long advance of the sandbox clock", () => {
  // Thirty days of three daily renewals and each day's close (shared/payouts), a few jobs per call.
  it("answers within its time budget whatever is due, and the same call goes on until nothing is due", {
    timeout: 60_000,
  }, async () => {
    const env = await environment();
    const subscriptions = await dailySubscriptions(env, 3);
    const stored = await findEnvironment(env.scope);
    if (!stored) throw new Error("the environment was just made");
    const caller = { projectId: env.scope, sandbox: true, environment: stored };
    const start = await clockNow(env);
    const target = new Date(start + 30 * DAY + 3_600_000).toISOString();
    // A function with little time left: the advance may start jobs for 300 ms only.
    const shortOfTime = { remainingTimeMs: () => JOB_RESERVE_MS + 300 };

    const calls: Array<{ now: string; ran: number; remaining: number }> = [];
    for (let call = 0; call < 200; call++) {
      const answer = await advanceClock(caller, { advance_to: target }, shortOfTime);
      calls.push({ now: answer.clock.now, ran: answer.jobs.length, remaining: answer.jobs_remaining });
      for (const job of answer.jobs) expect(job.outcome, job.name).not.toMatch(/^failed/);
      if (answer.jobs_remaining === 0) break;
      // Stopped short: the clock stands where the work does, before the target.
      expect(Date.parse(answer.clock.now)).toBeLessThan(Date.parse(target));
      expect(answer.jobs.length).toBeGreaterThan(0);
    }

    const last = calls.at(-1) as (typeof calls)[number];
    expect(last.remaining).toBe(0);
    // At the target (read as the answer was made, a few milliseconds on).
    expect(Date.parse(last.now) - Date.parse(target)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(last.now) - Date.parse(target)).toBeLessThan(5_000);
    expect(calls.length, "the budget cut the advance into several calls").toBeGreaterThan(1);
    expect(calls[0]?.remaining).toBeGreaterThan(0);
    // Every daily period of the 30 days charged exactly once, for every subscription.
    const paid = await paidIterations(env);
    for (const id of subscriptions) {
      const iterations = paid.get(id) ?? [];
      expect(iterations, id).toEqual(Array.from({ length: iterations.length }, (_, index) => index + 1));
      expect(iterations.length, id).toBeGreaterThanOrEqual(30);
      expect(iterations.length, id).toBeLessThanOrEqual(32);
    }
  });

  it("answers 504 with its request id, and logs that id, when a handler runs out of the function's time", async () => {
    const lines: string[] = [];
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      vi.spyOn(stream, "write").mockImplementation(((chunk: unknown, ...rest: never[]) => {
        const line = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
        if (!line.includes("slow-request-1")) return write(chunk as never, ...rest);
        lines.push(line);
        return true;
      }) as never);
    }
    let aborted = false;
    const handler = httpCore(async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      aborted = request.signal.aborted;
      return ok({});
    });
    const credentials = Buffer.from(
      `${local.project.sandbox.project_id}:${local.project.sandbox.private_key}`,
    );
    const event = {
      version: "2.0",
      routeKey: "GET /slow",
      rawPath: "/slow",
      rawQueryString: "",
      headers: { authorization: `Basic ${credentials.toString("base64")}` },
      requestContext: { requestId: "slow-request-1", http: { method: "GET", path: "/slow" } },
      isBase64Encoded: false,
    };

    const answer = await handler(event as never, lambdaContext("test/slow", 150) as Context);

    expect(answer.statusCode).toBe(504);
    expect(JSON.parse(answer.body ?? "")).toMatchObject({
      success: false,
      error_type: "internal",
      request_id: "slow-request-1",
      message: expect.stringContaining("slow-request-1"),
    });
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.level === "ERROR");
    expect(logged).toMatchObject({
      request_id: "slow-request-1",
      message: expect.stringContaining("time limit"),
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(aborted, "the handler is told to stop").toBe(true);
  });
});

describe("concurrent runners", () => {
  it("lets one advance run at a time: the others are refused at once, and every period is charged once", async () => {
    const env = await environment();
    const subscriptions = await dailySubscriptions(env, 2);
    const target = new Date((await clockNow(env)) + 10 * DAY + 3_600_000).toISOString();

    const answers = await Promise.all(
      Array.from({ length: 4 }, () => env.client.post("/sandbox/clock", { advance_to: target })),
    );

    const won = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(won).toHaveLength(1);
    for (const answer of refused) {
      expect(answer.status).toBe(409);
      expect(answer.body.error_type).toBe("request.sandbox.clock-advancing");
    }
    const jobs = won[0]?.body.jobs as Array<{ outcome: string }>;
    expect(jobs.filter((job) => job.outcome.startsWith("failed"))).toEqual([]);
    // An advance answers within its time budget: on a busy machine the same call goes on.
    for (let remaining = won[0]?.body.jobs_remaining as number; remaining > 0; ) {
      const more = await env.client.post("/sandbox/clock", { advance_to: target });
      expect(more.status).toBe(200);
      expect(more.body.jobs.filter((job: { outcome: string }) => job.outcome.startsWith("failed"))).toEqual(
        [],
      );
      remaining = more.body.jobs_remaining;
    }
    const paid = await paidIterations(env);
    for (const id of subscriptions) {
      expect(paid.get(id), id).toEqual(Array.from({ length: 11 }, (_, index) => index + 1));
    }
    // The clock is free again.
    const next = await env.client.post("/sandbox/clock", {
      advance_to: new Date(Date.parse(target) + 1000).toISOString(),
    });
    expect(next.status).toBe(200);
  });

  it("stops before a job that failed, counting it as remaining, and runs it on the next call", async () => {
    // The merchant's own capture holds the transaction longer than the job waits for it.
    // Held long enough that the jobs due before it (the authorization day's close) run first even on
    // a busy machine, and the capture's job still finds the merchant's capture under way.
    const { env, captureAt, merchantCapture } = await merchantCapturing(8_000);
    const target = new Date(captureAt + 3 * DAY).toISOString();

    const stopped = await env.client.post("/sandbox/clock", { advance_to: target });

    expect(stopped.status).toBe(200);
    const ran = stopped.body.jobs as Array<{ kind: string; outcome: string }>;
    expect(ran.filter((job) => job.kind !== "daily-close")).toEqual([
      expect.objectContaining({ kind: "capture-invoice", outcome: expect.stringMatching(/^failed/) }),
    ]);
    expect(ran.at(-1)?.kind).toBe("capture-invoice");
    expect(stopped.body.jobs_remaining).toBe(1);
    expect(Date.parse(stopped.body.clock.now)).toBeLessThan(Date.parse(target));
    expect((await merchantCapture).status).toBe(200);
    // The merchant's capture cancelled the job's schedule meanwhile: nothing is left, the clock goes on.
    const again = await env.client.post("/sandbox/clock", { advance_to: target });
    expect(again.body.jobs.filter((job: { outcome: string }) => job.outcome.startsWith("failed"))).toEqual(
      [],
    );
    expect(again.body.jobs_remaining).toBe(0);
    expect(Date.parse(again.body.clock.now)).toBeGreaterThanOrEqual(Date.parse(target));
  });

  it("reports a job another runner held as done, never as failed", async () => {
    // The merchant's own capture is under way at the provider when the advance reaches the job.
    const { env, captureAt, merchantCapture, calls } = await merchantCapturing(400);

    const advanced = await env.client.post("/sandbox/clock", {
      advance_to: new Date(captureAt + 1000).toISOString(),
    });

    expect((await merchantCapture).status).toBe(200);
    expect(advanced.status).toBe(200);
    expect(advanced.body.jobs).toHaveLength(2);
    expect(advanced.body.jobs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "capture-invoice", outcome: "already-captured" }),
        // The merchant's capture settled on the sandbox gateway: its day's close ran on the way (before
        // or after the job, as the capture's settlement and the advance meet).
        expect.objectContaining({
          kind: "daily-close",
          outcome: expect.stringMatching(/^payouts: 1 created/),
        }),
      ]),
    );
    expect(calls).toHaveBeenCalledTimes(1);
  });
});
