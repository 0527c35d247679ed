import { mkdir } from "node:fs/promises";
import { SetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { type FauxqsServer, startFauxqs } from "fauxqs";
import { type QueueDeclaration, type QueueName, queues } from "../topology.ts";

/**
 * The local stack's SQS: fauxqs, in this process (library mode), speaking the real SQS protocol
 * with visibility timeouts, receive counts and dead-letter redrive. Every queue of
 * `lib/topology.ts` is created with the attributes the CDK stack gives it (visibility timeout,
 * retention, redrive to its dead-letter queue after `maxReceiveCount`), and brought up to date
 * with them on every start. With a `dataDir`, queues and messages survive a restart.
 */
export interface LocalQueue {
  declaration: QueueDeclaration;
  url: string;
  arn: string;
  deadLetterUrl: string;
  deadLetterArn: string;
}

export interface LocalQueues {
  /** The SQS endpoint (`AWS_ENDPOINT_URL_SQS`). */
  endpoint: string;
  queues: Record<QueueName, LocalQueue>;
  /** The emulator itself, for tests that inspect a queue. */
  server: FauxqsServer;
  stop(): Promise<void>;
}

/** The name of a queue's dead-letter queue (also in AWS, as the construct id suffix). */
export const deadLetterName = (declaration: QueueDeclaration) => `${declaration.id}DeadLetters`;

export async function startLocalQueues(options: { dataDir?: string } = {}): Promise<LocalQueues> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const server = await startFauxqs({
    port: 0,
    logger: false,
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  const region = process.env.AWS_REGION ?? "us-east-1";
  const sqs = new SQSClient({ region, endpoint: server.address });
  try {
    const created = {} as Record<QueueName, LocalQueue>;
    for (const [name, declaration] of Object.entries(queues) as [QueueName, QueueDeclaration][]) {
      const deadLetter = server.createQueue(deadLetterName(declaration));
      const queue = server.createQueue(declaration.id);
      const deadLetterUrl = onEndpoint(deadLetter.queueUrl, server.address);
      const queueUrl = onEndpoint(queue.queueUrl, server.address);
      // createQueue leaves an existing queue's attributes as they were: set them on every start.
      await sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl: deadLetterUrl,
          Attributes: { MessageRetentionPeriod: String(declaration.deadLetterRetentionSeconds) },
        }),
      );
      await sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl: queueUrl,
          Attributes: {
            VisibilityTimeout: String(declaration.visibilityTimeoutSeconds),
            MessageRetentionPeriod: String(declaration.retentionSeconds),
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: deadLetter.queueArn,
              maxReceiveCount: declaration.maxReceiveCount,
            }),
          },
        }),
      );
      created[name] = {
        declaration,
        url: queueUrl,
        arn: queue.queueArn,
        deadLetterUrl,
        deadLetterArn: deadLetter.queueArn,
      };
    }
    return { endpoint: server.address, queues: created, server, stop: () => server.stop() };
  } catch (error) {
    await server.stop();
    throw error;
  } finally {
    sqs.destroy();
  }
}

/**
 * fauxqs names queues `http://sqs.<region>.localhost:<port>/…`, a host that does not resolve
 * everywhere, and the SDK sends requests to a queue URL's host: the same path on the endpoint's
 * address works wherever the endpoint does.
 */
function onEndpoint(queueUrl: string, endpoint: string): string {
  return new URL(new URL(queueUrl).pathname, endpoint).href;
}
