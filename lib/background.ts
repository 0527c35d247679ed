import { CfnOutput, Duration, type RemovalPolicy, type Stack, Validations } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { FilterCriteria, StartingPosition } from "aws-cdk-lib/aws-lambda";
import { DynamoEventSource, SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { alarmOnDeadLetters } from "./alarms.ts";
import { ApiFunction, type CardVaultKeys, grantCardVault } from "./api-function.ts";
import { grantExportFiles } from "./export-files.ts";
import { nagRendering } from "./nag.ts";
import {
  functionId,
  type QueueDeclaration,
  type QueueName,
  type TableAction,
  type Topology,
} from "./topology.ts";

/**
 * The background work of `lib/topology.ts` in AWS (the local stack runs the same declarations in
 * `lib/local/background.ts`): each queue with its dead-letter queue and an alarm on it, each
 * stream consumer as a function on the table's stream behind its event filter, each queue worker
 * as a function on its queue with partial batch failures. Every function gets exactly the table
 * actions it declares and the queue rights it needs.
 */
export interface BackgroundWorkProps {
  topology: Pick<Topology, "queues" | "streamConsumers" | "queueWorkers">;
  table: Table;
  /** The export files, for the functions that declare `exportFiles`. */
  exportFiles: Bucket;
  /** The card vault's keys, for the functions that declare `cardVault` (the SFTP delivery opens its secret). */
  cardKeys: CardVaultKeys;
  /** Environment every function gets (stage, service name, log level, …). */
  environment: Record<string, string>;
  removalPolicy: RemovalPolicy;
  /** A queue worker's event source maximum concurrency by handler, instead of its declaration's (`lib/capacity.ts`). */
  maxConcurrency?: Readonly<Record<string, number>>;
}

export interface BuiltQueue {
  queue: Queue;
  deadLetters: Queue;
  /** In alarm while the dead-letter queue holds a message. */
  deadLetterAlarm: Alarm;
}

export interface BuiltBackgroundWork {
  queues: Record<QueueName, BuiltQueue>;
  /** The function of each stream consumer and queue worker, by handler. */
  functions: Map<string, ApiFunction>;
  /** In alarm while a stream consumer falls behind the stream (its iterator age). */
  iteratorAgeAlarms: Map<string, Alarm>;
}

/** A stream consumer whose oldest unprocessed record is older than this is stuck, not busy. */
export const ITERATOR_AGE_ALARM_MS = 5 * 60 * 1000;

export function buildBackgroundWork(stack: Stack, props: BackgroundWorkProps): BuiltBackgroundWork {
  const { queues, streamConsumers, queueWorkers } = props.topology;
  const built = {} as Record<QueueName, BuiltQueue>;
  for (const [name, declaration] of Object.entries(queues) as [QueueName, QueueDeclaration][]) {
    built[name] = buildQueue(stack, declaration, props.removalPolicy);
  }

  const functions = new Map<string, ApiFunction>();
  const functionFor = (handler: string, timeoutSeconds: number) => {
    const fn = new ApiFunction(stack, functionId(handler), {
      handler,
      environment: props.environment,
      logRemovalPolicy: props.removalPolicy,
      timeout: Duration.seconds(timeoutSeconds),
    });
    functions.set(handler, fn);
    return fn;
  };

  for (const handler of Object.keys(props.maxConcurrency ?? {})) {
    if (!queueWorkers.some((worker) => worker.handler === handler)) {
      throw new Error(`Maximum concurrency for ${handler}, which is no queue worker`);
    }
  }

  const iteratorAgeAlarms = new Map<string, Alarm>();
  for (const consumer of streamConsumers) {
    const fn = functionFor(consumer.handler, consumer.timeoutSeconds);
    grantTableActions(fn, props.table, consumer.table);
    // Retried until it succeeds (no retry limit, no maximum record age): skipping a record would
    // lose an event. `reportBatchItemFailures` restarts from the first failed record only.
    fn.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: consumer.batchSize,
        reportBatchItemFailures: true,
        filters: [FilterCriteria.filter({ ...consumer.filter })],
      }),
    );
    for (const queueName of consumer.sendsTo) {
      const { queue } = built[queueName];
      queue.grantSendMessages(fn);
      fn.addEnvironment(queues[queueName].urlVariable, queue.queueUrl);
    }
    iteratorAgeAlarms.set(
      consumer.handler,
      new Alarm(stack, `${functionId(consumer.handler)}IteratorAgeAlarm`, {
        alarmDescription: `${consumer.handler} is more than ${ITERATOR_AGE_ALARM_MS / 60_000} minutes behind the table's stream: events are not being fanned out.`,
        metric: fn.metric("IteratorAge", { statistic: "Maximum", period: Duration.minutes(1) }),
        threshold: ITERATOR_AGE_ALARM_MS,
        evaluationPeriods: 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  for (const worker of queueWorkers) {
    const declaration = queues[worker.queue];
    if (declaration.visibilityTimeoutSeconds < worker.timeoutSeconds) {
      throw new Error(
        `The visibility timeout of ${declaration.id} is shorter than ${worker.handler}'s time limit`,
      );
    }
    const fn = functionFor(worker.handler, worker.timeoutSeconds);
    grantTableActions(fn, props.table, worker.table);
    const { queue } = built[worker.queue];
    // The event source lets the function receive, delete and change the visibility of messages.
    fn.addEventSource(
      new SqsEventSource(queue, {
        batchSize: worker.batchSize,
        maxConcurrency: props.maxConcurrency?.[worker.handler] ?? worker.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
    fn.addEnvironment(declaration.urlVariable, queue.queueUrl);
    if (worker.exportFiles) grantExportFiles(fn, props.exportFiles, worker.exportFiles);
    if (worker.cardVault) grantCardVault(fn, props.cardKeys, worker.cardVault);
  }

  return { queues: built, functions, iteratorAgeAlarms };
}

function buildQueue(stack: Stack, declaration: QueueDeclaration, removalPolicy: RemovalPolicy): BuiltQueue {
  const deadLetters = new Queue(stack, `${declaration.id}DeadLetters`, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.seconds(declaration.deadLetterRetentionSeconds),
    removalPolicy,
  });
  const queue = new Queue(stack, declaration.id, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: Duration.seconds(declaration.visibilityTimeoutSeconds),
    retentionPeriod: Duration.seconds(declaration.retentionSeconds),
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: declaration.maxReceiveCount },
    removalPolicy,
  });
  const deadLetterAlarm = alarmOnDeadLetters(
    stack,
    `${declaration.id}DeadLettersAlarm`,
    deadLetters,
    `${declaration.id} moved a message to its dead-letter queue: a delivery gave up after its last attempt (or its message was not a delivery). The message is kept there intact.`,
  );
  new CfnOutput(stack, `${declaration.id}DeadLettersUrl`, {
    value: deadLetters.queueUrl,
    description: `Dead-letter queue of ${declaration.id}`,
  });
  return { queue, deadLetters, deadLetterAlarm };
}

/**
 * Exactly `actions` on the table, and `TABLE_NAME`. The indexes are included only for `Query`
 * (the other item actions address the table itself).
 */
function grantTableActions(fn: ApiFunction, table: Table, actions: readonly TableAction[]): void {
  // A function that only relays stream records to a queue reads nothing of the table.
  if (actions.length === 0) return;
  const resources = [table.tableArn];
  if (actions.includes("Query")) resources.push(`${table.tableArn}/index/*`);
  fn.addToRolePolicy(
    new PolicyStatement({ actions: actions.map((action) => `dynamodb:${action}`), resources }),
  );
  if (actions.includes("Query") && fn.role) {
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagRendering(fn, table.tableArn)}/index/*]`,
      reason:
        "Query also reads the global secondary indexes of the stage's one table, whose ARNs IAM can only name as <table ARN>/index/*.",
    });
  }
  fn.addEnvironment("TABLE_NAME", table.tableName);
}
