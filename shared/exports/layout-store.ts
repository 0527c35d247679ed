import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { countChange } from "../db/counters.ts";
import { keys, type Scope } from "../db/keys.ts";
import { type Page, type PageRequest, queryPage } from "../db/listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { ExportType } from "./catalogue.ts";
import type { ExportLayout } from "./layout.ts";

/**
 * Table access for export layouts: one item per layout (`keys.resource`), listed and counted, every
 * change conditional on the version read; and per type one default item naming the default layout
 * (`keys.exportLayoutDefault`), written in the same transaction as the layout, conditional on the
 * default read before: making a layout the default replaces the previous one atomically, and two
 * concurrent requests cannot both win.
 */
const ENTITY = "export_layout";
const ITEM_TYPE = "export-layout";
const DEFAULT_ITEM_TYPE = "export-layout-default";

export interface VersionedLayout {
  layout: ExportLayout;
  version: number;
}

function fromItem(item: Record<string, unknown>): VersionedLayout {
  const { pk, sk, gsi1pk, gsi1sk, type: _itemType, version, entity_type, ...layout } = item;
  return {
    layout: { ...(layout as unknown as ExportLayout), type: entity_type as ExportType },
    version: Number(version),
  };
}

function item(layout: ExportLayout, version: number) {
  const { type, ...rest } = layout;
  return {
    ...keys.resource(layout.project_id, layout.id),
    ...keys.listing(layout.project_id, ENTITY, layout.id),
    type: ITEM_TYPE,
    entity_type: type,
    version,
    ...rest,
  };
}

/** The default layout of a type as it is now (`null`: none chosen): the condition of a change to it. */
export type DefaultState = string | null;

/** Makes `layoutId` the type's default, on the condition that the default is still `previous`. */
function claimDefault(
  scope: Scope,
  type: ExportType,
  layoutId: string,
  previous: DefaultState,
): TransactItem {
  return {
    Put: {
      TableName: config.tableName,
      Item: { ...keys.exportLayoutDefault(scope, type), type: DEFAULT_ITEM_TYPE, layout_id: layoutId },
      ConditionExpression: previous === null ? "attribute_not_exists(pk)" : "#layout = :previous",
      ExpressionAttributeNames: previous === null ? undefined : { "#layout": "layout_id" },
      ExpressionAttributeValues: previous === null ? undefined : { ":previous": previous },
    },
  };
}

/** The type has no default any more, on the condition that `layoutId` was it. */
function releaseDefault(scope: Scope, type: ExportType, layoutId: string): TransactItem {
  return {
    Delete: {
      TableName: config.tableName,
      Key: keys.exportLayoutDefault(scope, type),
      ConditionExpression: "#layout = :id",
      ExpressionAttributeNames: { "#layout": "layout_id" },
      ExpressionAttributeValues: { ":id": layoutId },
    },
  };
}

/** What a write does to its type's default: nothing, make the layout it, or make it no longer. */
export type DefaultChange =
  | { kind: "none" }
  | { kind: "claim"; previous: DefaultState }
  | { kind: "release" };

function defaultItems(layout: ExportLayout, change: DefaultChange): TransactItem[] {
  if (change.kind === "claim")
    return [claimDefault(layout.project_id, layout.type, layout.id, change.previous)];
  if (change.kind === "release") return [releaseDefault(layout.project_id, layout.type, layout.id)];
  return [];
}

export type WriteOutcome = "written" | "changed";

export async function insertLayout(layout: ExportLayout, change: DefaultChange): Promise<WriteOutcome> {
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: item(layout, 1),
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      countChange(layout.project_id, ENTITY, 1),
      ...defaultItems(layout, change),
    ]);
    return "written";
  } catch (error) {
    // Only the default can have moved (the layout's id is new): another request changed it.
    if (failedConditions(error)?.includes(2)) return "changed";
    throw error;
  }
}

export async function findLayout(scope: Scope, id: string): Promise<VersionedLayout | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: config.tableName, Key: keys.resource(scope, id), ConsistentRead: true }),
  );
  return Item?.type === ITEM_TYPE ? fromItem(Item) : undefined;
}

/** The id of the type's default layout, read consistently (a write's condition is built from it). */
export async function findDefaultLayoutId(scope: Scope, type: ExportType): Promise<DefaultState> {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: keys.exportLayoutDefault(scope, type),
      ConsistentRead: true,
    }),
  );
  return typeof Item?.layout_id === "string" ? Item.layout_id : null;
}

/** The default layout of every type that has one, in one query. */
export async function defaultLayoutIds(scope: Scope): Promise<Set<string>> {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: config.tableName,
      KeyConditionExpression: "#pk = :pk",
      ExpressionAttributeNames: { "#pk": "pk" },
      ExpressionAttributeValues: { ":pk": keys.exportLayoutDefault(scope, "transactions").pk },
      ConsistentRead: true,
    }),
  );
  return new Set(Items.map((found) => String(found.layout_id)));
}

export async function listLayouts(scope: Scope, page: PageRequest): Promise<Page<ExportLayout>> {
  const result = await queryPage(scope, ENTITY, page);
  return { ...result, items: result.items.map((found) => fromItem(found).layout) };
}

/** Replaces a layout read at `version`, changing its type's default as asked, atomically. */
export async function replaceLayout(
  current: VersionedLayout,
  next: ExportLayout,
  change: DefaultChange,
): Promise<WriteOutcome> {
  try {
    await transactWrite([
      {
        Put: {
          TableName: config.tableName,
          Item: item(next, current.version + 1),
          ConditionExpression: "#version = :version",
          ExpressionAttributeNames: { "#version": "version" },
          ExpressionAttributeValues: { ":version": current.version },
        },
      },
      ...defaultItems(next, change),
    ]);
    return "written";
  } catch (error) {
    if (failedConditions(error)?.length) return "changed";
    throw error;
  }
}

/** Deletes a layout read at `version`; when it was its type's default, the type is left without one. */
export async function deleteLayout(current: VersionedLayout, wasDefault: boolean): Promise<WriteOutcome> {
  const { layout } = current;
  try {
    await transactWrite([
      {
        Delete: {
          TableName: config.tableName,
          Key: keys.resource(layout.project_id, layout.id),
          ConditionExpression: "#version = :version",
          ExpressionAttributeNames: { "#version": "version" },
          ExpressionAttributeValues: { ":version": current.version },
        },
      },
      countChange(layout.project_id, ENTITY, -1),
      ...(wasDefault ? [releaseDefault(layout.project_id, layout.type, layout.id)] : []),
    ]);
    return "written";
  } catch (error) {
    if (failedConditions(error)?.length) return "changed";
    throw error;
  }
}
