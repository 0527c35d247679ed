import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { encodeTime } from "ulid";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import type { ListedEntity, Scope } from "../db/keys.ts";
import { listingPartitionsRead, mergedPartitionItems, type PartitionRead } from "../db/listing.ts";
import { TABLE } from "../db/table.ts";
import { ID_PREFIXES, type IdKind } from "../ids.ts";
import { transactionFromItem } from "../payments/store.ts";
import { presentTransaction } from "../payments/transaction.ts";
import { type Payout, presentPayout } from "../payouts/payout.ts";
import { pageOfPayoutItems } from "../payouts/store.ts";
import type { ExportType } from "./catalogue.ts";

/**
 * The rows of an export, read a page at a time from the listing index and handed on one by one:
 * never more than a page per listing shard is held. Rows are in creation order (ids are ULIDs); the id range read is
 * bounded by the period's real-time ends, and `created_at` (business time) selects the rows.
 */
export type ExportRow = Readonly<Record<string, string | number | boolean | null>>;

/**
 * Items read per round trip: small enough that a page is a few hundred KB at most. The listing's
 * shards are read a page each (the pages drain at about the same pace, ids being spread evenly),
 * so a few MB at most are held.
 */
export const ROWS_PER_PAGE = 250;

export interface RowQuery {
  scope: Scope;
  type: ExportType;
  from: string;
  to: string;
  /** How far the environment's clock was ahead of real time (see `ExportRecord.clock_offset_ms`). */
  clockOffsetMs: number;
}

/**
 * A source of one type's rows: the listed entity whose listing partition it reads, the kind of its
 * ids when they carry the real time of creation (then the id range read is bounded by the period),
 * and the rows of one item read.
 */
interface RowSource {
  entity: ListedEntity;
  idKind?: IdKind;
  /** Which items read belong to the period (a DynamoDB filter). */
  period(query: RowQuery): PeriodFilter;
  rows(query: RowQuery, item: Record<string, unknown>): AsyncIterable<ExportRow> | Iterable<ExportRow>;
}

interface PeriodFilter {
  expression: string;
  names: Record<string, string>;
  values: Record<string, string | null>;
}

/** Created in the period (business time). */
const createdIn = (query: RowQuery): PeriodFilter => ({
  expression: "#created >= :from AND #created < :to",
  names: { "#created": "created_at" },
  values: { ":from": query.from, ":to": query.to },
});

/** The first midnight (UTC) at or after `iso`, as a day. */
function dayFrom(iso: string): string {
  const at = Date.parse(iso);
  const midnight = Math.ceil(at / 86_400_000) * 86_400_000;
  return new Date(midnight).toISOString().slice(0, 10);
}

/**
 * Paying out a business day that begins in the period (the sandbox gateway's daily payouts, made
 * at the day's close, belong to the day they pay out); a provider's payout without a business day
 * when it settled in the period.
 */
const payingOutIn = (query: RowQuery): PeriodFilter => ({
  expression:
    "(#day >= :fromDay AND #day < :toDay) OR ((attribute_not_exists(#day) OR #day = :null) AND #settled >= :from AND #settled < :to)",
  names: { "#day": "business_day", "#settled": "settled_at" },
  values: {
    ":fromDay": dayFrom(query.from),
    ":toDay": dayFrom(query.to),
    ":null": null,
    ":from": query.from,
    ":to": query.to,
  },
});

const transactions: RowSource = {
  entity: "transaction",
  idKind: "transaction",
  period: createdIn,
  *rows(_query, item) {
    const transaction = presentTransaction(transactionFromItem(item));
    yield {
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

/** A payout item as stored (`shared/payouts/store.ts`): its own type is kept as `item_type`. */
function payoutRecord(item: Record<string, unknown>): Payout {
  const { pk, sk, gsi1pk, gsi1sk, type, version, ...payout } = item;
  return payout as unknown as Payout;
}

/** Payouts of the period (their ids hold their business day, not real time: no id range). */
const payouts: RowSource = {
  entity: "payout",
  period: payingOutIn,
  *rows(_query, item) {
    const payout = presentPayout(payoutRecord(item));
    yield {
      id: payout.id,
      status: payout.status,
      amount: payout.amount,
      currency: payout.currency,
      bank_name: payout.bank_name,
      bank_summary: payout.bank_summary,
      sales_transactions: payout.sales_transactions,
      sales_volume: payout.sales_volume,
      refunds_transactions: payout.refunds_transactions,
      refunds_volume: payout.refunds_volume,
      chargebacks_transactions: payout.chargebacks_transactions,
      chargebacks_volume: payout.chargebacks_volume,
      fees: payout.fees,
      adjustments: payout.adjustments,
      reserve: payout.reserve,
      settled_at: payout.settled_at,
      created_at: payout.created_at,
    };
  },
};

/** The items of the payouts of the period, a page of each payout's items at a time. */
const payoutItems: RowSource = {
  entity: "payout",
  period: payingOutIn,
  async *rows(query, item) {
    const payout = payoutRecord(item);
    let startAfter: string | undefined;
    for (;;) {
      const page = await pageOfPayoutItems(query.scope, payout, {
        limit: ROWS_PER_PAGE,
        order: "asc",
        ...(startAfter === undefined ? {} : { startAfter }),
      });
      for (const payoutItem of page.items) {
        yield {
          id: payoutItem.id,
          payout_id: payoutItem.payout_id,
          transaction_id: payoutItem.transaction_id,
          type: payoutItem.type,
          gateway_resource_id: payoutItem.gateway_resource_id,
          amount: payoutItem.amount,
          fees: payoutItem.fees,
          ...payoutItem.breakdown,
          currency: payoutItem.currency,
          created_at: payoutItem.created_at,
        };
      }
      if (!page.hasMore) return;
      startAfter = page.items.at(-1)?.id;
    }
  },
};

const SOURCES: Record<ExportType, RowSource> = {
  transactions,
  payouts,
  payout_items: payoutItems,
};

/** The rows of the query, in creation order, one page of the table at a time. */
export async function* exportRows(query: RowQuery): AsyncGenerator<ExportRow> {
  const source = SOURCES[query.type];
  const fromMs = Date.parse(query.from) - Math.max(0, query.clockOffsetMs);
  const toMs = Date.parse(query.to);
  // Ids that hold the real time of creation are at most `created_at`, and at least `created_at`
  // less the clock's offset: the id range read is bounded by the period.
  const range = source.idKind
    ? {
        lowest: `${ID_PREFIXES[source.idKind]}${encodeTime(Math.max(0, fromMs), 10)}`,
        highest: `${ID_PREFIXES[source.idKind]}${encodeTime(toMs, 10)}~`,
      }
    : undefined;
  const period = source.period(query);
  const index = TABLE.indexes.gsi1;
  // The listing's shards, read a page each and merged in id order (`mergedPartitionItems`).
  const read: PartitionRead = (partition, exclusiveStartKey) =>
    dynamo.send(
      new QueryCommand({
        TableName: config.tableName,
        IndexName: index.name,
        KeyConditionExpression: `#pk = :pk${range ? " AND #sk BETWEEN :lowest AND :highest" : ""}`,
        FilterExpression: period.expression,
        ExpressionAttributeNames: {
          "#pk": index.partitionKey,
          ...(range ? { "#sk": index.sortKey } : {}),
          ...period.names,
        },
        ExpressionAttributeValues: {
          ":pk": partition,
          ...(range ? { ":lowest": range.lowest, ":highest": range.highest } : {}),
          ...period.values,
        },
        ScanIndexForward: true,
        Limit: ROWS_PER_PAGE,
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
  const partitions = listingPartitionsRead(query.scope, source.entity);
  for await (const found of mergedPartitionItems(partitions, index.sortKey, read)) {
    yield* source.rows(query, found);
  }
}
