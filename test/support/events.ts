import { indexPartitionItems, listingPartitionsRead } from "../../shared/db/listing.ts";

/**
 * Every event an environment recorded, oldest first, read straight from the table (every page of
 * its event listing): what tests assert "an event is recorded iff the state changed" against.
 */
export async function recordedEvents(scope: string): Promise<Record<string, unknown>[]> {
  return indexPartitionItems("gsi1", listingPartitionsRead(scope, "event"));
}

/** The names of the events recorded about one transaction, sorted. */
export async function eventNamesOfTransaction(scope: string, transactionId: string): Promise<string[]> {
  return (await recordedEvents(scope))
    .filter((event) => (event.data as { transaction?: { id?: string } }).transaction?.id === transactionId)
    .map((event) => String(event.name))
    .sort();
}
