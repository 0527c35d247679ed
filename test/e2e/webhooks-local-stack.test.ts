import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../shared/webhooks/signature.ts";
import { type Receiver, startReceiver } from "../support/webhooks.ts";
import { api, type RunningStack, startStack } from "./harness.ts";

/**
 * Webhooks as `npm start` runs them: the table's stream, fauxqs and the delivery worker all run
 * inside the one process, which stops cleanly on SIGTERM and carries on after a restart. The stack
 * has its own DynamoDB Local: on the shared one, other stacks' pollers would race this one's.
 */
let dataDir: string;
let stack: RunningStack | undefined;
let receiver: Receiver;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "webhooks-stack-test-"));
  receiver = await startReceiver("npm-start");
});

afterAll(async () => {
  await stack?.stop();
  await receiver.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("webhooks in the local stack (npm start)", () => {
  let secret: string;
  let firstEventId: string;

  it("delivers a signed webhook for an event to a receiver on loopback (sandbox)", async () => {
    stack = await startStack({ dataDir, dynamodb: "own" });
    const sandbox = api(stack.url, stack.credentials.sandbox);
    const project = await sandbox.put(`/projects/${stack.credentials.sandbox.project_id}`, {
      webhook_url: receiver.url,
    });
    expect(project.status).toBe(200);
    secret = project.body.project.webhook_signing_secret;

    expect((await sandbox.post("/customers", { first_name: "Ada" })).status).toBe(200);
    const [request] = await receiver.waitFor(1);
    firstEventId = (await sandbox.get("/events")).body.events[0].id;
    expect(JSON.parse(request?.body ?? "")).toEqual({ event_id: firstEventId });
    expect(
      verifySignature(secret, request?.headers["webhook-signature"] as string, request?.body ?? "").valid,
    ).toBe(true);
  });

  it("stops cleanly on SIGTERM", async () => {
    const running = stack as RunningStack;
    const started = Date.now();
    expect(await running.stop()).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(running.output()).not.toMatch(/failed|Error/);
    stack = undefined;
  });

  it("carries on after a restart on the same DATA_DIR: no old event delivered again, new ones delivered", async () => {
    stack = await startStack({ dataDir, dynamodb: "own" });
    const sandbox = api(stack.url, stack.credentials.sandbox);
    expect((await sandbox.post("/customers", { first_name: "Grace" })).status).toBe(200);
    await receiver.waitFor(2);
    await new Promise((done) => setTimeout(done, 300));
    const delivered = receiver.requests.map((request) => JSON.parse(request.body).event_id);
    expect(delivered).toHaveLength(2);
    expect(delivered[0]).toBe(firstEventId);
    expect(delivered[1]).not.toBe(firstEventId);
  });
});
