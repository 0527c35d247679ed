/**
 * An environment's private keys (issue 24, "API keys that can rotate"): several at once, a new one
 * shown once, a roll with an overlap, a revocation; the starting key keeps working until it is
 * revoked or rolled; another environment's keys are unknown here.
 */

import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clock } from "../../shared/clock.ts";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { keys } from "../../shared/db/keys.ts";
import { KEY_USE_WINDOW_MS, keyUsesOf, recordKeyUse } from "../../shared/projects/key-use.ts";
import { hashPrivateKey, newPrivateKey } from "../../shared/projects/keys.ts";
import { createProject } from "../../shared/projects/project.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";

const local = useInProcessApi("API keys test");

/** A fresh project of its own, and a client under its starting key. */
async function environment() {
  const project = await createProject("API keys");
  return {
    project,
    client: api(local.url, project.sandbox),
    as: (key: string) => api(local.url, { ...project.sandbox, private_key: key }),
  };
}

describe("API keys", () => {
  it("creates a key shown once, which opens requests beside the starting key, and lists both without secrets", async () => {
    const { project, client, as } = await environment();
    const created = await client.post("/api-keys", { name: "Checkout server" }, { idempotencyKey: "key-1" });
    expect(created.status).toBe(200);
    const secret = created.body.private_key as string;
    expect(secret).toMatch(/^key_sandbox_[A-Za-z0-9_-]{32}$/);
    expect(created.body.api_key).toMatchObject({
      id: expect.stringMatching(/^apik_[0-9A-Z]{26}$/),
      name: "Checkout server",
      last4: secret.slice(-4),
      status: "active",
      expires_at: null,
      revoked_at: null,
    });

    // Never shown again: a replay of the request answers the key without its secret.
    const replayed = await client.post("/api-keys", { name: "Checkout server" }, { idempotencyKey: "key-1" });
    expect(replayed.status).toBe(200);
    expect(replayed.body.api_key.id).toBe(created.body.api_key.id);
    expect(replayed.body.private_key).toBeNull();
    const { Item: kept } = await dynamo.send(
      new GetCommand({
        TableName: config.tableName,
        Key: keys.idempotency(project.sandbox.project_id, "private-key", "key-1"),
      }),
    );
    expect(kept).toBeDefined();
    expect(JSON.stringify(kept)).not.toContain(secret);

    expect((await as(secret).get("/customers")).status).toBe(200);
    expect((await client.get("/customers")).status).toBe(200);

    const listed = await client.get("/api-keys");
    expect(listed.status).toBe(200);
    expect(listed.body.api_keys.map((key: { id: string }) => key.id)).toEqual([
      created.body.api_key.id,
      `apik_${project.sandbox.project_id.split("_").at(-1)}`,
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect(JSON.stringify(listed.body)).not.toMatch(/hash/);
    expect(listed.body.api_keys[1]).toMatchObject({ last4: null, status: "active" });
  });

  it("rolls a key: the new one works at once, the old one until its overlap ends, then neither it nor a revoked key", async () => {
    const { project, client, as } = await environment();
    const starting = `apik_${project.sandbox.project_id.split("_").at(-1)}`;
    const rolled = await client.post(`/api-keys/${starting}/roll`, { overlap_seconds: 3600 });
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    const fresh = rolled.body.private_key as string;
    expect(rolled.body.rolled_api_key).toMatchObject({ id: starting, status: "expiring" });
    const ends = Date.parse(rolled.body.rolled_api_key.expires_at);
    expect(ends - Date.now()).toBeGreaterThan(3500_000);
    expect(ends - Date.now()).toBeLessThanOrEqual(3600_000);

    // Both work during the overlap.
    expect((await as(fresh).get("/customers")).status).toBe(200);
    expect((await client.get("/customers")).status).toBe(200);

    // An overlap of 0 ends the old key at once.
    const again = await as(fresh).post(`/api-keys/${rolled.body.api_key.id}/roll`, { overlap_seconds: 0 });
    expect(again.status).toBe(200);
    const third = again.body.private_key as string;
    expect((await as(fresh).get("/customers")).status).toBe(401);
    expect((await as(third).get("/customers")).status).toBe(200);
    // An expired key cannot be rolled again.
    const expired = await as(third).post(`/api-keys/${rolled.body.api_key.id}/roll`, {});
    expect(expired.status).toBe(409);
    expect(expired.body.error_type).toBe("request.api-key.not-active");

    // Revoking the starting key ends its overlap now.
    const revoked = await as(third).del(`/api-keys/${starting}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.api_key).toMatchObject({ id: starting, status: "revoked" });
    expect((await client.get("/customers")).status).toBe(401);

    // The last key that opens requests stays.
    const last = await as(third).del(`/api-keys/${again.body.api_key.id}`);
    expect(last.status).toBe(409);
    expect(last.body.error_type).toBe("request.api-key.last");
    expect((await as(third).get("/customers")).status).toBe(200);

    // Each change is in the activity log, with the key that made it.
    const activities = await as(third).get("/activities?limit=10");
    expect(activities.body.activities.map((entry: { type: string }) => entry.type)).toEqual([
      "api_key.revoked",
      "api_key.rolled",
      "api_key.rolled",
    ]);
  });

  it("refuses bad input, naming the field, and answers 404 for another environment's key", async () => {
    const { client } = await environment();
    const other = await environment();
    const tooLong = await client.post("/api-keys", { name: "x".repeat(81) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.invalid_fields.map((field: { name: string }) => field.name)).toEqual(["name"]);
    const otherKey = `apik_${other.project.sandbox.project_id.split("_").at(-1)}`;
    const overlap = await client.post(`/api-keys/${otherKey}/roll`, { overlap_seconds: 8 * 24 * 3600 });
    expect(overlap.status).toBe(400);
    expect(overlap.body.invalid_fields.map((field: { name: string }) => field.name)).toEqual([
      "overlap_seconds",
    ]);
    expect((await client.post(`/api-keys/${otherKey}/roll`, {})).status).toBe(404);
    expect((await client.del(`/api-keys/${otherKey}`)).status).toBe(404);
    expect((await client.del("/api-keys/not-a-key")).status).toBe(404);
    // The other environment's starting key still opens its own requests only.
    expect((await other.client.get("/customers")).status).toBe(200);
  });

  it("opens a request with a key another container created, which this one's cached copy does not know yet", async () => {
    const { project, client } = await environment();
    expect((await client.get("/customers")).status).toBe(200);
    // Another container's roll: written straight to the table, so this container's copy is stale.
    const secret = newPrivateKey(true);
    const starting = `apik_${project.sandbox.project_id.split("_").at(-1)}`;
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: config.tableName, Key: keys.project(project.sandbox.project_id) }),
    );
    const now = new Date().toISOString();
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: keys.project(project.sandbox.project_id),
        UpdateExpression: "SET api_keys = :list, keys_version = :one",
        ExpressionAttributeValues: {
          ":one": 1,
          ":list": [
            {
              id: starting,
              name: null,
              hash: Item?.key_hash,
              last4: null,
              created_at: now,
              expires_at: now,
              revoked_at: null,
            },
            {
              id: "apik_01JZ0000000000000000000000",
              name: null,
              hash: hashPrivateKey(secret),
              last4: secret.slice(-4),
              created_at: now,
              expires_at: null,
              revoked_at: null,
            },
          ],
        },
      }),
    );
    const other = api(local.url, { ...project.sandbox, private_key: secret });
    expect((await other.get("/customers")).status).toBe(200);
    // And once read again, the starting key's end is known here too.
    expect((await client.get("/customers")).status).toBe(401);
    expect(
      (await api(local.url, { ...project.sandbox, private_key: newPrivateKey(true) }).get("/customers"))
        .status,
    ).toBe(401);
  });

  it("keeps every one of concurrent creations (each change is conditional on the list it read)", async () => {
    const { client, as } = await environment();
    const answers = await Promise.all(Array.from({ length: 6 }, () => client.post("/api-keys", {})));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const ids = answers.map((answer) => answer.body.api_key.id as string);
    expect(new Set(ids).size).toBe(6);
    const listed = await client.get("/api-keys");
    expect(
      listed.body.api_keys
        .map((key: { id: string }) => key.id)
        .slice(0, 6)
        .sort(),
    ).toEqual([...ids].sort());
    expect(listed.body.api_keys).toHaveLength(7);
    for (const answer of answers)
      expect((await as(answer.body.private_key).get("/customers")).status).toBe(200);
  });
});

describe("API keys' last use", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** The key-use writes sent for `keyId` from now on (each DynamoDB UpdateItem of its item). */
  function keyUseWrites(scope: string, keyId: string, fail = false) {
    const send = dynamo.send.bind(dynamo);
    const writes: string[] = [];
    vi.spyOn(dynamo, "send").mockImplementation(((command: UpdateCommand) => {
      const input = command.input as UpdateCommand["input"] | undefined;
      if (
        command instanceof UpdateCommand &&
        input?.Key?.pk === keys.keyUse(scope).pk &&
        input.ExpressionAttributeNames?.["#key"] === keyId
      ) {
        writes.push(String(input.ExpressionAttributeValues?.[":at"]));
        if (fail) return Promise.reject(new Error("DynamoDB is throttling"));
      }
      return send(command as never);
    }) as never);
    return writes;
  }

  async function lastUsed(client: ReturnType<typeof api>, keyId: string): Promise<string | null> {
    const listed = await client.get("/api-keys");
    expect(listed.status).toBe(200);
    return listed.body.api_keys.find((key: { id: string }) => key.id === keyId).last_used_at;
  }

  it("is null for a new key, set once it opens a request, and written once per 5 minutes however often it is used", async () => {
    const { project, client, as } = await environment();
    const scope = project.sandbox.project_id;
    const created = await client.post("/api-keys", { name: "Reports" });
    const { id } = created.body.api_key;
    expect(await lastUsed(client, id)).toBeNull();

    const writes = keyUseWrites(scope, id);
    const before = Date.now();
    expect((await as(created.body.private_key).get("/customers")).status).toBe(200);
    // The write started beside the request; nothing waited for it.
    expect(writes).toHaveLength(1);
    await vi.waitFor(async () => expect(await lastUsed(client, id)).not.toBeNull());
    const first = (await lastUsed(client, id)) as string;
    expect(Date.parse(first)).toBeGreaterThanOrEqual(before - 1000);

    // Used again within the window: nothing written.
    for (let use = 0; use < 3; use++)
      expect((await as(created.body.private_key).get("/customers")).status).toBe(200);
    expect(writes).toHaveLength(1);
    expect(await lastUsed(client, id)).toBe(first);

    // Once the window is over, the next use is written, later.
    const later = new Date(Date.now() + KEY_USE_WINDOW_MS + 1000);
    vi.spyOn(clock, "now").mockReturnValue(later);
    expect((await as(created.body.private_key).get("/customers")).status).toBe(200);
    expect(writes).toHaveLength(2);
    await vi.waitFor(async () => expect(await lastUsed(client, id)).toBe(later.toISOString()));
  });

  it("never goes backwards, and a failed write never fails the request (the next use tries again)", async () => {
    const { project, client, as } = await environment();
    const scope = project.sandbox.project_id;
    const { body } = await client.post("/api-keys", { name: "Batch" });
    const { id } = body.api_key;
    await recordKeyUse(scope, id, new Date("2030-01-01T00:00:00.000Z"));
    await recordKeyUse(scope, id, new Date("2029-01-01T00:00:00.000Z"));
    expect((await keyUsesOf(scope))[id]).toBe("2030-01-01T00:00:00.000Z");

    const nightly = (await client.post("/api-keys", { name: "Nightly" })).body;
    const failing = keyUseWrites(scope, nightly.api_key.id, true);
    expect((await as(nightly.private_key).get("/customers")).status).toBe(200);
    expect(failing).toHaveLength(1);
    vi.restoreAllMocks();
    // The failure made the container forget the use: the next one, within the window, writes again.
    const retried = keyUseWrites(scope, nightly.api_key.id);
    await vi.waitFor(async () => {
      expect((await as(nightly.private_key).get("/customers")).status).toBe(200);
      expect(retried).toHaveLength(1);
    });
    await vi.waitFor(async () => expect(await lastUsed(client, nightly.api_key.id)).not.toBeNull());
  });
});
