import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { activityWrite } from "../activities/activity.ts";
import { clock } from "../clock.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys } from "../db/keys.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { notFound } from "../http/errors.ts";
import { environmentProjectId } from "../ids.ts";
import { forgetEnvironment } from "./environment.ts";

/**
 * `DELETE /projects/{id}`: an environment is deleted by its own key, or by the supervisor that
 * created it (`supervision.ts`). A live environment takes its sandbox with it (the whole project);
 * a sandbox key deletes only the sandbox, never live. The environment's item is kept, marked
 * `deleted_at` (its payments stay on record), and from then on it is unknown: its keys are refused,
 * its checkout and payment links are not found, and its scheduled work (renewals, automatic
 * captures, its daily close) finds no environment and does nothing. Containers that read the
 * environment within the last 30 seconds (`findEnvironment`'s cache) may accept its key until then.
 *
 * The official clients send the path's placeholder itself (`/projects/%7Bproject_id%7D`, or raw
 * braces): it names no project, so it is a 404, as any id that is not the caller's.
 */
export async function deleteProject(caller: Caller, id: string): Promise<void> {
  const supervised = id !== caller.projectId && (await isSupervisedBy(caller, id));
  if (id !== caller.projectId && !supervised) throw notFound("project", id);
  const now = clock.now();
  const rootId = caller.projectId === id ? caller.environment.root_project_id : id.replace(/^test-/, "");
  const sandbox = id.startsWith("test-");
  // A live environment goes with its sandbox; a sandbox goes alone.
  const deleted = sandbox ? [id] : [id, environmentProjectId(rootId, true)];
  const writes: TransactItem[] = deleted.map((environmentId, index) => ({
    Update: {
      TableName: config.tableName,
      Key: keys.project(environmentId),
      UpdateExpression: "SET #deleted_at = :now",
      // The environment asked for must exist and not be deleted; its sandbox may be either.
      ConditionExpression:
        index === 0 ? "#type = :project AND attribute_not_exists(#deleted_at)" : "attribute_exists(pk)",
      ExpressionAttributeNames: { "#deleted_at": "deleted_at", ...(index === 0 ? { "#type": "type" } : {}) },
      ExpressionAttributeValues: {
        ":now": now.toISOString(),
        ...(index === 0 ? { ":project": "project" } : {}),
      },
    },
  }));
  if (supervised) {
    writes.push(
      {
        Update: {
          TableName: config.tableName,
          Key: keys.resource(caller.projectId, id),
          UpdateExpression: "SET #deleted_at = :now REMOVE #gsi1pk, #gsi1sk",
          ConditionExpression: "attribute_exists(#gsi1pk)",
          ExpressionAttributeNames: { "#deleted_at": "deleted_at", "#gsi1pk": "gsi1pk", "#gsi1sk": "gsi1sk" },
          ExpressionAttributeValues: { ":now": now.toISOString() },
        },
      },
      countChange(caller.projectId, "supervised_project", -1),
      ...activityWrite(
        caller,
        "project.deleted",
        `Supervised project ${id} deleted`,
        { type: "project", id },
        now,
      ),
    );
  }
  // The deleted environment's own log says so too, for the records.
  writes.push(
    ...activityWrite(
      { ...caller, projectId: id, sandbox },
      "project.deleted",
      supervised ? `Deleted by its supervisor ${caller.projectId}` : "Project deleted",
      { type: "project", id },
      now,
    ),
  );
  try {
    await transactWrite(writes);
  } catch (error) {
    if (failedConditions(error)?.some((index) => index === 0 || (supervised && index === deleted.length))) {
      throw notFound("project", id);
    }
    throw error;
  } finally {
    for (const environmentId of deleted) forgetEnvironment(environmentId);
  }
}

/** Whether `id` is an environment this caller created (`POST /supervised-projects`) and has not deleted. */
async function isSupervisedBy(caller: Caller, id: string): Promise<boolean> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: keys.resource(caller.projectId, id),
      ConsistentRead: true,
    }),
  );
  return Item?.type === "supervised_project" && Item.gsi1pk !== undefined;
}
