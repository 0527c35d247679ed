import { join } from "node:path";
import type { DynamoDBStreamEvent, SQSEvent } from "aws-lambda";
import { SANDBOX_PRIVATE_NETWORK_VARIABLE } from "../../shared/webhooks/settings.ts";
import { type QueueName, queues, queueWorkers, streamConsumers } from "../topology.ts";
import { handlerLoader, invoke, lambdaContext } from "./lambda.ts";
import { repoRoot } from "./paths.ts";
import { type QueuePoller, startQueuePoller } from "./queue-poller.ts";
import { type LocalQueue, type LocalQueues, startLocalQueues } from "./queues.ts";
import { type StreamPoller, startStreamPoller } from "./stream-poller.ts";

/**
 * The background work of `lib/topology.ts` on this machine, as the CDK stack deploys it in AWS: the
 * queues (fauxqs), a poller on DynamoDB Local's stream per stream consumer, and SQS pollers per
 * queue worker, each calling the same handler with the same event Lambda would.
 *
 * It sets the environment those handlers read (each queue's URL, the SQS endpoint, and
 * `WEBHOOK_SANDBOX_PRIVATE_NETWORK=allow`, which lets sandbox webhooks reach receivers on this
 * machine) until it stops, so a process runs one of it at a time, like the local stack.
 */
export interface BackgroundWorkOptions {
  dynamodbEndpoint: string;
  tableName: string;
  /** Keeps queued messages and the stream reading positions across restarts. Default: memory only. */
  dataDir?: string;
  /** Where `functions/` lives. Default: the repository root. */
  rootDir?: string;
  /** Pause between stream reads when nothing new came. Default 50 ms. */
  streamIdleDelayMs?: number;
  errorLog?: (message: string, error?: unknown) => void;
}

export interface BackgroundWork {
  sqsEndpoint: string;
  queues: Record<QueueName, LocalQueue>;
  /** The SQS emulator, for tests that look into a queue. */
  sqs: LocalQueues["server"];
  /** Stops reading the stream, lets the workers finish their batches, then stops the queues. */
  stop(): Promise<void>;
}

export async function startBackgroundWork(options: BackgroundWorkOptions): Promise<BackgroundWork> {
  const local = await startLocalQueues(options.dataDir ? { dataDir: join(options.dataDir, "sqs") } : {});
  const restoreEnvironment = setEnvironment({
    AWS_ENDPOINT_URL_SQS: local.endpoint,
    [SANDBOX_PRIVATE_NETWORK_VARIABLE]: "allow",
    ...Object.fromEntries(
      (Object.entries(local.queues) as [QueueName, LocalQueue][]).map(([name, queue]) => [
        queues[name].urlVariable,
        queue.url,
      ]),
    ),
  });

  for (const worker of queueWorkers) {
    const declaration = queues[worker.queue];
    if (declaration.visibilityTimeoutSeconds < worker.timeoutSeconds) {
      restoreEnvironment();
      await local.stop();
      throw new Error(
        `The visibility timeout of ${declaration.id} is shorter than ${worker.handler}'s time limit`,
      );
    }
  }

  const load = handlerLoader(options.rootDir ?? repoRoot);
  const call = async (handler: string, timeoutSeconds: number, event: DynamoDBStreamEvent | SQSEvent) => {
    const timeoutMs = timeoutSeconds * 1000;
    return invoke(await load(handler), event, lambdaContext(handler, timeoutMs), timeoutMs);
  };
  const errorLog = options.errorLog;

  const streamPollers: StreamPoller[] = streamConsumers.map((consumer) =>
    startStreamPoller({
      dynamodbEndpoint: options.dynamodbEndpoint,
      tableName: options.tableName,
      consumer,
      invoke: (event) => call(consumer.handler, consumer.timeoutSeconds, event),
      ...(options.dataDir
        ? { checkpointFile: join(options.dataDir, `stream-${consumer.handler.replaceAll("/", "-")}.json`) }
        : {}),
      ...(options.streamIdleDelayMs !== undefined ? { idleDelayMs: options.streamIdleDelayMs } : {}),
      ...(errorLog ? { errorLog } : {}),
    }),
  );
  const queuePollers: QueuePoller[] = queueWorkers.map((worker) => {
    const queue = local.queues[worker.queue];
    return startQueuePoller({
      sqsEndpoint: local.endpoint,
      queueUrl: queue.url,
      queueArn: queue.arn,
      worker,
      invoke: (event) => call(worker.handler, worker.timeoutSeconds, event),
      ...(errorLog ? { errorLog } : {}),
    });
  });

  let stopped: Promise<void> | undefined;
  return {
    sqsEndpoint: local.endpoint,
    queues: local.queues,
    sqs: local.server,
    stop() {
      stopped ??= (async () => {
        await Promise.all(streamPollers.map((poller) => poller.stop()));
        await Promise.all(queuePollers.map((poller) => poller.stop()));
        await local.stop();
        restoreEnvironment();
      })();
      return stopped;
    },
  };
}

/** Sets the variables and returns what puts back the values they had. */
function setEnvironment(variables: Record<string, string>): () => void {
  const env = process.env;
  const previous = Object.fromEntries(Object.keys(variables).map((name) => [name, env[name]]));
  Object.assign(env, variables);
  return () => {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
  };
}
