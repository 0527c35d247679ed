import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import { type PageRequest, queryPage } from "../db/listing.ts";
import type { Caller } from "../http/auth.ts";
import { notFound } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { ACTIVITY_ENTITY, type Activity, presentActivity } from "./activity.ts";

/** Reading the activity log (`GET /activities`, `GET /activities/{id}`); entries are written by their changes. */
function fromItem(item: Record<string, unknown>): Activity {
  const { pk, sk, gsi1pk, gsi1sk, type, activity_type, ...activity } = item;
  return { ...activity, type: activity_type } as unknown as Activity;
}

export async function pageOfActivities(caller: Caller, page: PageRequest) {
  const result = await queryPage(caller.projectId, ACTIVITY_ENTITY, page);
  return { ...result, items: result.items.map((item) => presentActivity(fromItem(item))) };
}

export async function getActivity(caller: Caller, id: string) {
  if (!isId("activity", id)) throw notFound("activity", id);
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(caller.projectId, id) }),
  );
  if (Item?.type !== ACTIVITY_ENTITY) throw notFound("activity", id);
  return presentActivity(fromItem(Item));
}
