import { QueryCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import { encodeTime } from "ulid";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys, type ListedEntity, type Scope } from "../db/keys.ts";
import { TABLE } from "../db/table.ts";
import { ID_PREFIXES, type IdKind } from "../ids.ts";
import { transactionFromItem } from "../payments/store.ts";
import { presentTransaction } from "../payments/transaction.ts";
import type { ExportType } from "./catalogue.ts";

/**
 * The rows of an export, read a page at a time from the listing index and handed on one by one:
 * never more than a page is held. Rows are in creation order (ids are ULIDs); the id range read is
 * bounded by the period's real-time ends, and `created_at` (business time) selects the rows.
 */
export type ExportRow = Readonly<Record<string, string | number | boolean | null>>;

/** Items read per round trip: small enough that a page is a few hundred KB at most. */
export const ROWS_PER_PAGE = 250;

export interface RowQuery {
  scope: Scope;
  type: ExportType;
  from: string;
  to: string;
  /** How far the environment's clock was ahead of real time (see `ExportRecord.clock_offset_ms`). */
  clockOffsetMs: number;
}

/** A source of one type's rows: the listed entity it reads, its ids, and the row of one item. */
interface RowSource {
  entity: ListedEntity;
  idKind: IdKind;
  row(item: Record<string, unknown>): ExportRow;
}

const transactions: RowSource = {
  entity: "transaction",
  idKind: "transaction",
  row(item) {
    const transaction = presentTransaction(transactionFromItem(item));
    return {
      id: transaction.id,
      invoice_id: transaction.invoice_id,
      customer_id: transaction.customer_id,
      subscription_id: transaction.subscription_id,
      token_id: transaction.token_id,
      card_id: transaction.card_id,
      gateway_configuration_id: transaction.gateway_configuration_id,
      gateway_name: transaction.gateway_name,
      name: transaction.name,
      status: transaction.status,
      amount: transaction.amount,
      authorized_amount: transaction.authorized_amount,
      captured_amount: transaction.captured_amount,
      refunded_amount: transaction.refunded_amount,
      available_amount: transaction.available_amount,
      voided_amount: transaction.voided_amount,
      currency: transaction.currency,
      payment_method: transaction.payment_method,
      error_code: transaction.error_code,
      three_d_s_status: transaction.three_d_s_status,
      chargedback: transaction.chargedback,
      sandbox: transaction.sandbox,
      created_at: transaction.created_at,
    };
  },
};

/** The row sources of the types whose data exists in this deployment. */
const SOURCES: Partial<Record<ExportType, RowSource>> = { transactions };

export class ExportTypeUnavailable extends Error {
  override name = "ExportTypeUnavailable";
}

export function canExport(type: ExportType): boolean {
  return SOURCES[type] !== undefined;
}

/** The rows of the query, in creation order, one page of the table at a time. */
export async function* exportRows(query: RowQuery): AsyncGenerator<ExportRow> {
  const source = SOURCES[query.type];
  if (!source) throw new ExportTypeUnavailable(`${query.type} cannot be exported in this deployment`);
  const prefix = ID_PREFIXES[source.idKind];
  const fromMs = Date.parse(query.from) - Math.max(0, query.clockOffsetMs);
  const toMs = Date.parse(query.to);
  // Ids hold the real time of creation, at most `created_at` and at least `created_at` less the offset.
  const lowest = `${prefix}${encodeTime(Math.max(0, fromMs), 10)}`;
  const highest = `${prefix}${encodeTime(toMs, 10)}~`;
  const index = TABLE.indexes.gsi1;
  let exclusiveStartKey: QueryCommandOutput["LastEvaluatedKey"];
  do {
    const output = await dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: index.name,
        KeyConditionExpression: "#pk = :pk AND #sk BETWEEN :lowest AND :highest",
        FilterExpression: "#created >= :from AND #created < :to",
        ExpressionAttributeNames: {
          "#pk": index.partitionKey,
          "#sk": index.sortKey,
          "#created": "created_at",
        },
        ExpressionAttributeValues: {
          ":pk": keys.listingPartition(query.scope, source.entity),
          ":lowest": lowest,
          ":highest": highest,
          ":from": query.from,
          ":to": query.to,
        },
        ScanIndexForward: true,
        Limit: ROWS_PER_PAGE,
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    for (const found of output.Items ?? []) yield source.row(found);
    exclusiveStartKey = output.LastEvaluatedKey;
  } while (exclusiveStartKey);
}
