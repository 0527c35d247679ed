import { existsSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type ShardIteratorType,
  type AttributeValue as StreamAttributeValue,
  type _Record as StreamRecord,
  TrimmedDataAccessException,
} from "@aws-sdk/client-dynamodb-streams";
import type { AttributeValue, DynamoDBRecord, DynamoDBStreamEvent } from "aws-lambda";
import type { StreamConsumerDeclaration, StreamFilterPattern } from "../topology.ts";

/**
 * The local stand-in for a Lambda event source mapping on the table's stream: it reads DynamoDB
 * Local's stream shard by shard (parents before children) with `@aws-sdk/client-dynamodb-streams`,
 * keeps the records the consumer's filter matches, and calls the consumer with the very
 * `DynamoDBStreamEvent` Lambda sends, in batches of its `batchSize`.
 *
 * As in AWS with `reportBatchItemFailures`: when the handler throws, or reports failed records,
 * reading starts again at the lowest failed sequence number (after a growing pause), so records
 * are seen again until they succeed and none is skipped. Where reading stands is kept per shard
 * (in a file under DATA_DIR for `npm start`), so a restart carries on where it stopped; without
 * a position a shard is read from its oldest record (`TRIM_HORIZON`), as the mapping does.
 */
export interface StreamPollerOptions {
  dynamodbEndpoint: string;
  tableName: string;
  consumer: StreamConsumerDeclaration;
  /** Calls the consumer's handler (as Lambda would) and returns what it returned. */
  invoke: (event: DynamoDBStreamEvent) => Promise<unknown>;
  /** Where reading positions are kept across restarts; default: in memory only. */
  checkpointFile?: string;
  /** Pause between reads when no shard had new records. Default 50 ms. */
  idleDelayMs?: number;
  errorLog?: (message: string, error?: unknown) => void;
}

export interface StreamPoller {
  /** Finishes the batch in hand, then stops reading. */
  stop(): Promise<void>;
}

const DEFAULT_IDLE_DELAY_MS = 50;
const SHARD_REFRESH_MS = 1_000;
const MAX_FAILURE_DELAY_MS = 5_000;
const GET_RECORDS_LIMIT = 1_000;

interface ShardState {
  id: string;
  parentId: string | undefined;
  iterator: string | undefined;
  /** The shard is closed and read to its end. */
  finished: boolean;
  failures: number;
}

export function startStreamPoller(options: StreamPollerOptions): StreamPoller {
  const errorLog = options.errorLog ?? ((message, error) => console.error(message, error ?? ""));
  const idleDelayMs = options.idleDelayMs ?? DEFAULT_IDLE_DELAY_MS;
  const credentials = { region: process.env.AWS_REGION ?? "us-east-1" };
  const tables = new DynamoDBClient({ ...credentials, endpoint: options.dynamodbEndpoint });
  const streams = new DynamoDBStreamsClient({ ...credentials, endpoint: options.dynamodbEndpoint });
  const checkpoints = new Checkpoints(options.checkpointFile);
  const shards = new Map<string, ShardState>();
  const pause = new Pause();
  let streamArn: string | undefined;
  let refreshedAt = 0;
  let stopped = false;

  async function refreshShards(): Promise<void> {
    const { Table } = await tables.send(new DescribeTableCommand({ TableName: options.tableName }));
    const latest = Table?.LatestStreamArn;
    if (!latest) throw new Error(`Table ${options.tableName} has no stream`);
    if (latest !== streamArn) {
      streamArn = latest;
      shards.clear();
    }
    let exclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      );
      for (const shard of StreamDescription?.Shards ?? []) {
        if (!shard.ShardId || shards.has(shard.ShardId)) continue;
        shards.set(shard.ShardId, {
          id: shard.ShardId,
          parentId: shard.ParentShardId,
          iterator: undefined,
          finished: false,
          failures: 0,
        });
      }
      exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    refreshedAt = Date.now();
  }

  async function iterator(shard: ShardState, type: ShardIteratorType, sequenceNumber?: string) {
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shard.id,
        ShardIteratorType: type,
        SequenceNumber: sequenceNumber,
      }),
    );
    return ShardIterator;
  }

  /** Reads one page of a shard and hands its matching records to the consumer; true when it had records. */
  async function pollShard(shard: ShardState): Promise<boolean> {
    const arn = streamArn as string;
    const position = checkpoints.get(arn, shard.id);
    shard.iterator ??= position
      ? await iterator(shard, "AFTER_SEQUENCE_NUMBER", position)
      : await iterator(shard, "TRIM_HORIZON");
    let page: { Records?: StreamRecord[]; NextShardIterator?: string };
    try {
      page = await streams.send(
        new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: GET_RECORDS_LIMIT }),
      );
    } catch (error) {
      if (error instanceof ExpiredIteratorException) {
        shard.iterator = undefined;
        return false;
      }
      if (error instanceof TrimmedDataAccessException) {
        checkpoints.delete(arn, shard.id);
        shard.iterator = undefined;
        return false;
      }
      throw error;
    }
    const records = (page.Records ?? []).map((record) => toLambdaRecord(record, arn));
    const matching = records.filter((record) => matchesFilter(options.consumer.filter, record));
    for (let start = 0; start < matching.length; start += options.consumer.batchSize) {
      const batch = matching.slice(start, start + options.consumer.batchSize);
      const failedAt = await deliver(batch);
      if (failedAt !== undefined) {
        shard.failures += 1;
        shard.iterator = await iterator(shard, "AT_SEQUENCE_NUMBER", failedAt);
        await pause.wait(Math.min(100 * 2 ** (shard.failures - 1), MAX_FAILURE_DELAY_MS));
        return true;
      }
    }
    shard.failures = 0;
    const last = records.at(-1)?.dynamodb?.SequenceNumber;
    if (last) await checkpoints.set(arn, shard.id, last);
    shard.iterator = page.NextShardIterator;
    if (!shard.iterator) shard.finished = true;
    return records.length > 0;
  }

  /** Calls the consumer; the sequence number to read again from when (part of) the batch failed. */
  async function deliver(batch: DynamoDBRecord[]): Promise<string | undefined> {
    const first = batch[0]?.dynamodb?.SequenceNumber as string;
    let result: unknown;
    try {
      result = await options.invoke({ Records: batch });
    } catch (error) {
      errorLog(`Stream consumer ${options.consumer.handler} failed; its batch will be read again`, error);
      return first;
    }
    const failures = reportedFailures(result, batch);
    if (failures === "all") {
      errorLog(
        `Stream consumer ${options.consumer.handler} reported an unknown record; its batch will be read again`,
      );
      return first;
    }
    const [lowest] = failures.sort(compareSequenceNumbers);
    if (lowest !== undefined) {
      errorLog(`Stream consumer ${options.consumer.handler} failed records; reading again from ${lowest}`);
    }
    return lowest;
  }

  /** Shards whose parent (if still listed) has been read to its end, so records stay in order. */
  function readyShards(): ShardState[] {
    return [...shards.values()].filter((shard) => {
      if (shard.finished) return false;
      const parent = shard.parentId ? shards.get(shard.parentId) : undefined;
      return !parent || parent.finished;
    });
  }

  const loop = (async () => {
    await checkpoints.load();
    let failures = 0;
    while (!stopped) {
      try {
        if (!streamArn || Date.now() - refreshedAt > SHARD_REFRESH_MS) await refreshShards();
        let hadRecords = false;
        for (const shard of readyShards()) {
          if (stopped) break;
          if (await pollShard(shard)) hadRecords = true;
        }
        failures = 0;
        if (!hadRecords) await pause.wait(idleDelayMs);
      } catch (error) {
        if (stopped) break;
        failures += 1;
        errorLog("Reading the table's stream failed; trying again", error);
        await pause.wait(Math.min(100 * 2 ** failures, MAX_FAILURE_DELAY_MS));
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      pause.interrupt();
      await loop;
      await checkpoints.flush();
      tables.destroy();
      streams.destroy();
    },
  };
}

/** What the handler reported failed: sequence numbers, or `all` when it named a record not in the batch. */
function reportedFailures(result: unknown, batch: DynamoDBRecord[]): string[] | "all" {
  const failures = (result as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures;
  if (failures === undefined || failures === null) return [];
  if (!Array.isArray(failures)) return "all";
  const known = new Set(batch.map((record) => record.dynamodb?.SequenceNumber));
  const reported: string[] = [];
  for (const failure of failures as unknown[]) {
    const identifier = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof identifier !== "string" || !known.has(identifier)) return "all";
    reported.push(identifier);
  }
  return reported;
}

/** Sequence numbers are decimal strings of varying length. */
function compareSequenceNumbers(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

function isValueList(value: readonly string[] | StreamFilterPattern): value is readonly string[] {
  return Array.isArray(value);
}

/** Lambda's event filtering, for the patterns topology declares: every leaf lists the allowed values. */
export function matchesFilter(pattern: StreamFilterPattern, value: unknown): boolean {
  return Object.entries(pattern).every(([field, expected]) => {
    const actual = (value as Record<string, unknown> | null | undefined)?.[field];
    if (isValueList(expected)) return typeof actual === "string" && expected.includes(actual);
    return typeof actual === "object" && actual !== null && matchesFilter(expected, actual);
  });
}

/** A stream record as Lambda delivers it: dates in epoch seconds, binary values in base64. */
export function toLambdaRecord(record: StreamRecord, streamArn: string): DynamoDBRecord {
  const data = record.dynamodb;
  const converted: DynamoDBRecord = {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: "aws:dynamodb",
    awsRegion: process.env.AWS_REGION ?? record.awsRegion,
    eventSourceARN: streamArn,
  };
  if (data) {
    converted.dynamodb = {
      ...(data.ApproximateCreationDateTime
        ? { ApproximateCreationDateTime: Math.floor(data.ApproximateCreationDateTime.getTime() / 1000) }
        : {}),
      ...(data.Keys ? { Keys: toLambdaImage(data.Keys) } : {}),
      ...(data.NewImage ? { NewImage: toLambdaImage(data.NewImage) } : {}),
      ...(data.OldImage ? { OldImage: toLambdaImage(data.OldImage) } : {}),
      ...(data.SequenceNumber ? { SequenceNumber: data.SequenceNumber } : {}),
      ...(data.SizeBytes !== undefined ? { SizeBytes: data.SizeBytes } : {}),
      ...(data.StreamViewType ? { StreamViewType: data.StreamViewType } : {}),
    };
  }
  return converted;
}

function toLambdaImage(image: Record<string, StreamAttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, toLambdaValue(value)]));
}

function toLambdaValue(value: StreamAttributeValue): AttributeValue {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString("base64") };
  if (value.BS !== undefined) return { BS: value.BS.map((item) => Buffer.from(item).toString("base64")) };
  if (value.M !== undefined) return { M: toLambdaImage(value.M) };
  if (value.L !== undefined) return { L: value.L.map(toLambdaValue) };
  if (value.S !== undefined) return { S: value.S };
  if (value.N !== undefined) return { N: value.N };
  if (value.SS !== undefined) return { SS: value.SS };
  if (value.NS !== undefined) return { NS: value.NS };
  if (value.BOOL !== undefined) return { BOOL: value.BOOL };
  return { NULL: true };
}

/** Reading positions per stream and shard; written to `file` (atomically) after each change when given. */
class Checkpoints {
  private positions: Record<string, string> | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly file: string | undefined) {}

  private all(): Record<string, string> {
    this.positions ??= {};
    return this.positions;
  }

  async load(): Promise<void> {
    if (this.positions || !this.file || !existsSync(this.file)) return;
    try {
      this.positions = JSON.parse(await readFile(this.file, "utf8")) as Record<string, string>;
    } catch {
      this.positions = {};
    }
  }

  get(streamArn: string, shardId: string): string | undefined {
    return this.all()[`${streamArn} ${shardId}`];
  }

  async set(streamArn: string, shardId: string, sequenceNumber: string): Promise<void> {
    this.all()[`${streamArn} ${shardId}`] = sequenceNumber;
    await this.save();
  }

  delete(streamArn: string, shardId: string): void {
    delete this.all()[`${streamArn} ${shardId}`];
  }

  private save(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    const snapshot = JSON.stringify(this.all());
    this.writing = this.writing.then(async () => {
      await writeFile(`${file}.tmp`, snapshot);
      await rename(`${file}.tmp`, file);
    });
    return this.writing;
  }

  flush(): Promise<void> {
    return this.writing;
  }
}

/** A sleep that `interrupt()` ends at once (for a quick stop). */
class Pause {
  private wake: (() => void) | undefined;
  private interrupted = false;

  wait(ms: number): Promise<void> {
    if (this.interrupted) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(finish, ms);
      function finish() {
        clearTimeout(timer);
        done();
      }
      this.wake = finish;
    });
  }

  interrupt(): void {
    this.interrupted = true;
    this.wake?.();
  }
}
