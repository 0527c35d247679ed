import { App } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { beforeAll, describe, expect, it } from "vitest";
import { EXPORT_RETENTION_DAYS } from "../../lib/export-files.ts";
import { PaymentStack } from "../../lib/payment-stack.ts";
import { allHandlers, queues, queueWorkers, streamConsumers } from "../../lib/topology.ts";
import {
  actionsOf,
  environmentOf,
  functionLogicalId,
  resource,
  resourcesOf,
  SKIP_BUNDLING,
  statementsOf,
  wholeTemplate,
} from "./templates.ts";

/**
 * The export files in AWS (`lib/export-files.ts`): one private, encrypted, TLS-only bucket whose
 * objects expire, used only by the functions that write exports; and the export queue's wiring.
 */
describe("export files", () => {
  let stack: PaymentStack;
  let template: Template;
  beforeAll(() => {
    const app = new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false });
    stack = new PaymentStack(app, "PaymentApi-exports", { stage: "exports" });
    app.synth();
    template = wholeTemplate(stack);
  }, 120_000);

  const bucketId = () => stack.getLogicalId(stack.exportFiles.node.defaultChild as never);

  it("are a private, encrypted bucket, reached over TLS only, whose files expire", () => {
    const bucket = resource(template, bucketId());
    expect(bucket.Properties).toMatchObject({
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: {
        Rules: [
          expect.objectContaining({
            ExpirationInDays: EXPORT_RETENTION_DAYS,
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
            Status: "Enabled",
          }),
        ],
      },
    });
    const policies = Object.values(resourcesOf(template, "AWS::S3::BucketPolicy"));
    const denyInsecure = policies.flatMap(
      (policy) =>
        (policy.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement,
    );
    expect(denyInsecure).toContainEqual(
      expect.objectContaining({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
    );
  });

  it("are granted only to the export run and the SFTP delivery, which are told the bucket", () => {
    const writers = ["exports/run", "exports/deliver"];
    for (const handler of allHandlers()) {
      const id = functionLogicalId(template, handler);
      const s3Actions = actionsOf(statementsOf(template, id)).filter((action) => action.startsWith("s3:"));
      const told = environmentOf(resource(template, id)).EXPORTS_BUCKET;
      if (writers.includes(handler)) {
        expect(s3Actions.sort(), handler).toEqual([
          "s3:AbortMultipartUpload",
          "s3:GetObject",
          "s3:PutObject",
        ]);
        expect(told, handler).toEqual({ Ref: bucketId() });
      } else {
        expect(s3Actions, handler).toEqual([]);
        expect(told, handler).toBeUndefined();
      }
    }
  });

  it("run exports and their deliveries from the table's stream through queues of their own", () => {
    const consumer = streamConsumers.find((declared) => declared.handler === "exports/enqueue");
    expect(consumer?.sendsTo).toEqual(["exportRuns", "exportDeliveries"]);
    const run = queueWorkers.find((declared) => declared.handler === "exports/run");
    expect(run?.queue).toBe("exportRuns");
    expect(queues.exportRuns.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(
      run?.timeoutSeconds ?? Infinity,
    );
    const deliver = queueWorkers.find((declared) => declared.handler === "exports/deliver");
    expect(deliver).toMatchObject({ queue: "exportDeliveries", cardVault: "open" });
    // Only the delivery opens sealed secrets (kms:Decrypt): the run does not.
    const kmsOf = (handler: string) =>
      actionsOf(statementsOf(template, functionLogicalId(template, handler))).filter((action) =>
        action.startsWith("kms:"),
      );
    expect(kmsOf("exports/deliver")).toContain("kms:Decrypt");
    expect(kmsOf("exports/run")).toEqual([]);
    const enqueue = functionLogicalId(template, "exports/enqueue");
    // It relays stream records: the stream's own actions, no table item action.
    const streamActions = [
      "dynamodb:DescribeStream",
      "dynamodb:GetRecords",
      "dynamodb:GetShardIterator",
      "dynamodb:ListStreams",
    ];
    const tableActions = actionsOf(statementsOf(template, enqueue)).filter(
      (action) => action.startsWith("dynamodb:") && !streamActions.includes(action),
    );
    expect(tableActions).toEqual([]);
    expect(environmentOf(resource(template, enqueue)).EXPORT_QUEUE_URL).toBeDefined();
  });

  it("raise no cdk-nag finding", () => {
    expect(new AwsSolutionsChecks().validateScope(stack).violations).toEqual([]);
  });
});
