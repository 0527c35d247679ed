import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { App, type CfnElement, Stack, Validations } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Queue } from "aws-cdk-lib/aws-sqs";
import { AwsSolutionsChecks } from "cdk-nag";
import type { IConstruct } from "constructs";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiFunction } from "../../lib/api-function.ts";
import { projectRoot } from "../../lib/bundling.ts";
import { CONTEXT_DEFAULTS, PaymentStack, validateStage } from "../../lib/payment-stack.ts";
import {
  allHandlers,
  cors,
  fallbackRoute,
  handlerEntry,
  queues,
  queueWorkers,
  recurringJobs,
  routeKey,
  routes,
  scheduledJobs,
  streamConsumers,
} from "../../lib/topology.ts";
import { TABLE } from "../../shared/db/table.ts";
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS } from "../../shared/webhooks/schedule.ts";
import {
  actionsOf,
  type CfnResource,
  environmentOf,
  functionLogicalId,
  referencedId,
  resource,
  resourcesOf,
  SKIP_BUNDLING,
  type Statement,
  statementsOf,
  wholeTemplate,
} from "./templates.ts";

const DYNAMODB_WRITE_ACTIONS = [
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:BatchWriteItem",
  "dynamodb:TransactWriteItems",
  "dynamodb:PartiQLInsert",
  "dynamodb:PartiQLUpdate",
  "dynamodb:PartiQLDelete",
  "dynamodb:*",
  "*",
];

/** Properties that give a resource a name of its own, which two stages could then collide on. */
const PHYSICAL_NAME_PROPERTIES: Record<string, string> = {
  "AWS::DynamoDB::Table": "TableName",
  "AWS::Lambda::Function": "FunctionName",
  "AWS::IAM::Role": "RoleName",
  "AWS::IAM::ManagedPolicy": "ManagedPolicyName",
  "AWS::Logs::LogGroup": "LogGroupName",
  "AWS::SQS::Queue": "QueueName",
  "AWS::S3::Bucket": "BucketName",
  "AWS::Scheduler::ScheduleGroup": "Name",
};

/** `*Name` properties that only name something inside its parent resource, so stages may share them. */
const SCOPED_NAME_PROPERTIES = new Set([
  "AttributeName",
  "IndexName",
  "StageName",
  "PolicyName",
  "MetricName",
]);
/** Subtrees that only refer to names (an alarm's metric dimensions name the resource they watch). */
const REFERENCE_PROPERTIES = new Set(["Dimensions"]);

/** The function an API route's integration invokes. */
function routeTargetFunction(template: Template, route: CfnResource): string {
  const [, parts] = (route.Properties.Target as { "Fn::Join": [string, unknown[]] })["Fn::Join"];
  const integration = resource(template, referencedId(parts[1]));
  expect(integration.Properties).toMatchObject({ IntegrationType: "AWS_PROXY", PayloadFormatVersion: "2.0" });
  return referencedId(integration.Properties.IntegrationUri);
}

function routesWithKey(template: Template, key: string): CfnResource[] {
  return Object.values(resourcesOf(template, "AWS::ApiGatewayV2::Route")).filter(
    (route) => route.Properties.RouteKey === key,
  );
}

const dynamodbStatements = (statements: Statement[]) =>
  statements.filter((statement) =>
    [statement.Action].flat().some((action) => action.startsWith("dynamodb:")),
  );

/** Every string value of a `*Name` property, at any depth. */
function namesIn(value: unknown, key = ""): string[] {
  if (typeof value === "string")
    return key.endsWith("Name") && !SCOPED_NAME_PROPERTIES.has(key) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap((item) => namesIn(item, key));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => (REFERENCE_PROPERTIES.has(k) ? [] : namesIn(v, k)));
  }
  return [];
}

describe("PaymentStack", () => {
  let app: App;
  let dev: PaymentStack;
  let prod: PaymentStack;
  let devTemplate: Template;
  let prodTemplate: Template;

  beforeAll(() => {
    // cdk-nag is not registered here (bin/app.ts does, and synth then fails on any finding): its own
    // test below runs the same checks, so a finding fails that one test and names the resource.
    app = new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false });
    dev = new PaymentStack(app, "PaymentApi-dev", { stage: "dev" });
    prod = new PaymentStack(app, "PaymentApi-prod", { stage: "prod" });
    app.synth();
    devTemplate = wholeTemplate(dev);
    prodTemplate = wholeTemplate(prod);
  }, 60_000);

  describe("routes", () => {
    it("gives every declared route exactly one API route, integrated with the function of its handler", () => {
      for (const route of routes) {
        const apiRoutes = routesWithKey(devTemplate, routeKey(route));
        expect(apiRoutes, routeKey(route)).toHaveLength(1);
        const target = routeTargetFunction(devTemplate, apiRoutes[0] as CfnResource);
        expect(target, routeKey(route)).toBe(functionLogicalId(devTemplate, route.handler));
      }
    });

    it("sends every request no route matches ($default) to the fallback function", () => {
      const defaultRoutes = routesWithKey(devTemplate, "$default");
      expect(defaultRoutes).toHaveLength(1);
      expect(routeTargetFunction(devTemplate, defaultRoutes[0] as CfnResource)).toBe(
        functionLogicalId(devTemplate, fallbackRoute.handler),
      );
    });

    it("declares no API route and no function the topology does not", () => {
      expect(Object.keys(resourcesOf(devTemplate, "AWS::ApiGatewayV2::Route"))).toHaveLength(
        routes.length + 1,
      );
      expect(Object.keys(resourcesOf(devTemplate, "AWS::Lambda::Function"))).toHaveLength(
        allHandlers().length,
      );
    });

    it("bundles each function from the handler file the topology names, exporting `handler`", () => {
      for (const handler of allHandlers()) {
        const fn = dev.functions.get(handler);
        expect(fn).toBeInstanceOf(ApiFunction);
        expect((fn as ApiFunction).entry).toBe(resolve(projectRoot, handlerEntry(handler)));
        expect(existsSync((fn as ApiFunction).entry), handler).toBe(true);
        expect(resource(devTemplate, functionLogicalId(devTemplate, handler)).Properties.Handler).toBe(
          "index.handler",
        );
      }
    });
  });

  describe("functions", () => {
    it("runs every function on nodejs22.x, arm64, with active tracing and source-mapped stack traces", () => {
      const timeouts = new Map<string, number>([
        ...[
          ...streamConsumers,
          ...queueWorkers,
          ...Object.values(scheduledJobs),
          ...Object.values(recurringJobs),
        ].map((fn) => [fn.handler, fn.timeoutSeconds] as const),
        ...routes.flatMap((route) =>
          route.timeoutSeconds ? [[route.handler, route.timeoutSeconds] as const] : [],
        ),
      ]);
      // The sandbox clock's advance works 10 s and answers; its function may run to the API's limit.
      expect(timeouts.get("sandbox/advance-clock")).toBe(29);
      for (const handler of allHandlers()) {
        const fn = resource(devTemplate, functionLogicalId(devTemplate, handler));
        expect(fn.Properties, handler).toMatchObject({
          Runtime: "nodejs22.x",
          Architectures: ["arm64"],
          MemorySize: 512,
          Timeout: timeouts.get(handler) ?? 10,
          TracingConfig: { Mode: "Active" },
        });
        expect(environmentOf(fn).NODE_OPTIONS).toBe("--enable-source-maps");
      }
    });

    it("gives every function a log group of its own, kept for a month", () => {
      const functions = Object.values(resourcesOf(devTemplate, "AWS::Lambda::Function"));
      const logGroupIds = functions.map((fn) =>
        referencedId((fn.Properties.LoggingConfig as { LogGroup: unknown }).LogGroup),
      );
      expect(new Set(logGroupIds).size).toBe(functions.length);
      for (const id of logGroupIds) {
        const logGroup = resource(devTemplate, id);
        expect(logGroup.Type).toBe("AWS::Logs::LogGroup");
        expect(logGroup.Properties.RetentionInDays).toBe(30);
      }
    });

    it("passes the stage, service name, log level and the API's own endpoint (links) to every function", () => {
      const api = dev.getLogicalId(dev.api.node.defaultChild as CfnElement);
      for (const fn of Object.values(resourcesOf(devTemplate, "AWS::Lambda::Function"))) {
        expect(environmentOf(fn)).toMatchObject({
          STAGE: "dev",
          POWERTOOLS_SERVICE_NAME: "payment-api",
          LOG_LEVEL: "INFO",
          API_URL: { "Fn::GetAtt": [api, "ApiEndpoint"] },
          // Where Stripe is: from the deployment, never a merchant's settings.
          STRIPE_API_URL: "https://api.stripe.com",
        });
        // Checkout links default to the API's own pages (`<API_URL>/checkout`); Adyen's endpoint
        // follows each environment (its test endpoint, or the live prefix) unless a stage names one.
        expect(environmentOf(fn)).not.toHaveProperty("CHECKOUT_URL");
        expect(environmentOf(fn)).not.toHaveProperty("ADYEN_CHECKOUT_API_URL");
      }
    });

    it("tells every route's function that uses the table its name, and no other", () => {
      const tableId = Object.keys(resourcesOf(devTemplate, "AWS::DynamoDB::Table"))[0];
      expect(routes.filter((route) => route.table === "none").length).toBeGreaterThan(0);
      for (const route of routes) {
        const fn = resource(devTemplate, functionLogicalId(devTemplate, route.handler));
        expect(environmentOf(fn).TABLE_NAME, route.handler).toEqual(
          route.table === "none" ? undefined : { Ref: tableId },
        );
      }
    });
  });

  describe("permissions", () => {
    it("lets the functions of read routes read the table, and write nothing but a key's use, to its own items", () => {
      const readRoutes = routes.filter((route) => route.table === "read");
      expect(readRoutes.length).toBeGreaterThan(0);
      for (const route of readRoutes) {
        const statements = statementsOf(devTemplate, functionLogicalId(devTemplate, route.handler));
        // A private key's use (shared/projects/key-use.ts): UpdateItem on the key-use items alone.
        const keyUse = statements.filter((statement) =>
          JSON.stringify(statement.Condition ?? {}).includes("dynamodb:LeadingKeys"),
        );
        const others = statements.filter((statement) => !keyUse.includes(statement));
        expect(actionsOf(others), route.handler).toContain("dynamodb:Query");
        expect(
          actionsOf(others).filter((action) => DYNAMODB_WRITE_ACTIONS.includes(action)),
          route.handler,
        ).toEqual([]);
        // On the table alone (the first resource its reads are granted on: the table, then its indexes).
        const reads = others.find((statement) => actionsOf([statement]).includes("dynamodb:Query"));
        const tableArn = [reads?.Resource].flat()[0];
        expect(tableArn, route.handler).toBeDefined();
        expect(keyUse, route.handler).toEqual(
          route.unauthenticated
            ? []
            : [
                {
                  Effect: "Allow",
                  Action: "dynamodb:UpdateItem",
                  Resource: tableArn,
                  Condition: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": ["key-use#*"] } },
                },
              ],
        );
      }
    });

    it("lets the functions of write routes write the table", () => {
      const writeRoutes = routes.filter((route) => route.table === "write");
      expect(writeRoutes.length).toBeGreaterThan(0);
      for (const route of writeRoutes) {
        const actions = actionsOf(statementsOf(devTemplate, functionLogicalId(devTemplate, route.handler)));
        expect(actions, route.handler).toEqual(
          expect.arrayContaining(["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"]),
        );
      }
    });

    it("grants DynamoDB actions only on the table and its indexes, never on every resource", () => {
      const tableId = Object.keys(resourcesOf(devTemplate, "AWS::DynamoDB::Table"))[0] as string;
      // Route stacks import the table by its name: their grants name its ARN as built from the name.
      const arnParts = [
        "arn:",
        { Ref: "AWS::Partition" },
        ":dynamodb:",
        { Ref: "AWS::Region" },
        ":",
        { Ref: "AWS::AccountId" },
        ":table/",
        { Ref: tableId },
      ];
      const tableArn = { "Fn::Join": ["", arnParts] };
      const indexArns = { "Fn::Join": ["", [...arnParts, "/index/*"]] };
      const statements = routes.flatMap((route) =>
        dynamodbStatements(statementsOf(devTemplate, functionLogicalId(devTemplate, route.handler))),
      );
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        for (const granted of [statement.Resource].flat()) {
          expect(granted).not.toBe("*");
          expect([tableArn, indexArns]).toContainEqual(granted);
        }
      }
    });

    it("gives the fallback function and the routes without table access no DynamoDB permission and no TABLE_NAME", () => {
      const tableless = [fallbackRoute, ...routes.filter((route) => route.table === "none")];
      expect(tableless.length).toBeGreaterThan(1);
      for (const { handler } of tableless) {
        const id = functionLogicalId(devTemplate, handler);
        expect(
          actionsOf(statementsOf(devTemplate, id)).filter((a) => a.startsWith("dynamodb:")),
          handler,
        ).toEqual([]);
        expect(environmentOf(resource(devTemplate, id)), handler).not.toHaveProperty("TABLE_NAME");
      }
    });

    it("uses no AWS managed policy: a function's role may write logs only to the function's own log group", () => {
      for (const [id, fn] of Object.entries(resourcesOf(devTemplate, "AWS::Lambda::Function"))) {
        const role = resource(devTemplate, referencedId(fn.Properties.Role));
        expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
        const logStatements = statementsOf(devTemplate, id).filter((statement) =>
          [statement.Action].flat().some((action) => action.startsWith("logs:")),
        );
        const ownLogGroup = referencedId((fn.Properties.LoggingConfig as { LogGroup: unknown }).LogGroup);
        expect(logStatements.map((statement) => statement.Resource)).toEqual([
          { "Fn::GetAtt": [ownLogGroup, "Arn"] },
        ]);
      }
    });
  });

  describe("card vault", () => {
    const keyIds = (template: Template) => {
      const keys = Object.entries(resourcesOf(template, "AWS::KMS::Key"));
      const encryption = keys.find(([, key]) => key.Properties.KeySpec === undefined);
      const fingerprint = keys.find(([, key]) => key.Properties.KeySpec === "HMAC_256");
      if (!encryption || !fingerprint) throw new Error("The card vault's keys are missing");
      return { encryption: encryption[0], fingerprint: fingerprint[0] };
    };
    const kmsStatements = (handler: string) =>
      statementsOf(devTemplate, functionLogicalId(devTemplate, handler)).filter((statement) =>
        [statement.Action].flat().some((action) => action.startsWith("kms:")),
      );

    it("has a rotating symmetric key for card secrets and an HMAC_256 key for fingerprints, and no other", () => {
      devTemplate.resourceCountIs("AWS::KMS::Key", 2);
      const { encryption, fingerprint } = keyIds(devTemplate);
      expect(resource(devTemplate, encryption).Properties).toMatchObject({ EnableKeyRotation: true });
      expect(resource(devTemplate, fingerprint).Properties).toMatchObject({
        KeySpec: "HMAC_256",
        KeyUsage: "GENERATE_VERIFY_MAC",
      });
    });

    it("keeps the keys with the data on persistent stages and deletes them with a sandbox stage", () => {
      for (const [template, policy] of [
        [prodTemplate, "Retain"],
        [devTemplate, "Delete"],
      ] as const) {
        for (const id of Object.values(keyIds(template))) {
          expect(resource(template, id).DeletionPolicy, id).toBe(policy);
          expect(resource(template, id).UpdateReplacePolicy, id).toBe(policy);
        }
      }
    });

    it("declares a sealing route (POST /cards) and opening routes (token verification) in the topology", () => {
      expect(routes.find((route) => routeKey(route) === "POST /cards")?.cardVault).toBe("seal");
      expect(routes.filter((route) => route.cardVault === "open").map(routeKey)).toEqual(
        expect.arrayContaining([
          "POST /customers/{customer_id}/tokens",
          "PUT /customers/{customer_id}/tokens/{token_id}",
        ]),
      );
      for (const route of routes.filter((candidate) => candidate.method === "GET")) {
        expect(route.cardVault, routeKey(route)).toBeUndefined();
      }
    });

    it("lets only sealing functions create data keys and fingerprints, and only opening ones decrypt", () => {
      const { encryption, fingerprint } = keyIds(devTemplate);
      const encryptionArn = { "Fn::GetAtt": [encryption, "Arn"] };
      const fingerprintArn = { "Fn::GetAtt": [fingerprint, "Arn"] };
      const contextCondition = {
        "ForAllValues:StringEquals": { "kms:EncryptionContextKeys": ["card_id", "field", "project_id"] },
        Null: { "kms:EncryptionContextKeys": "false" },
      };
      for (const route of routes) {
        const granted = kmsStatements(route.handler).map((statement) => ({
          actions: [statement.Action].flat(),
          resource: statement.Resource,
          condition: (statement as Statement & { Condition?: unknown }).Condition,
        }));
        const expected =
          route.cardVault === "seal"
            ? [
                { actions: ["kms:GenerateDataKey"], resource: encryptionArn, condition: contextCondition },
                { actions: ["kms:GenerateMac"], resource: fingerprintArn, condition: undefined },
              ]
            : route.cardVault === "open"
              ? [{ actions: ["kms:Decrypt"], resource: encryptionArn, condition: contextCondition }]
              : [];
        expect(granted, routeKey(route)).toEqual(expected);
      }
      expect(kmsStatements(fallbackRoute.handler)).toEqual([]);
    });

    it("tells a function the keys it may use, and no function any other", () => {
      const { encryption, fingerprint } = keyIds(devTemplate);
      for (const route of routes) {
        const variables = environmentOf(resource(devTemplate, functionLogicalId(devTemplate, route.handler)));
        if (route.cardVault) {
          expect(variables.CARD_KEY_ID, route.handler).toEqual({ "Fn::GetAtt": [encryption, "Arn"] });
        } else {
          expect(variables, route.handler).not.toHaveProperty("CARD_KEY_ID");
        }
        if (route.cardVault === "seal") {
          expect(variables.CARD_FINGERPRINT_KEY_ID, route.handler).toEqual({
            "Fn::GetAtt": [fingerprint, "Arn"],
          });
        } else {
          expect(variables, route.handler).not.toHaveProperty("CARD_FINGERPRINT_KEY_ID");
        }
        expect(variables, route.handler).not.toHaveProperty("CARD_KEY_FILE");
      }
    });
  });

  describe("table", () => {
    it("is built from shared/db/table.ts: key attributes, every index, and the TTL attribute", () => {
      const indexes = Object.values(TABLE.indexes);
      devTemplate.resourceCountIs("AWS::DynamoDB::Table", 1);
      devTemplate.hasResourceProperties("AWS::DynamoDB::Table", {
        KeySchema: [
          { AttributeName: TABLE.partitionKey, KeyType: "HASH" },
          { AttributeName: TABLE.sortKey, KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: indexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: "HASH" },
            { AttributeName: index.sortKey, KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: index.projection },
        })),
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      });
      const table = Object.values(resourcesOf(devTemplate, "AWS::DynamoDB::Table"))[0] as CfnResource;
      const keyAttributes = [
        TABLE.partitionKey,
        TABLE.sortKey,
        ...indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
      ];
      expect(table.Properties.AttributeDefinitions).toEqual(
        expect.arrayContaining(keyAttributes.map((name) => ({ AttributeName: name, AttributeType: "S" }))),
      );
    });

    it("streams new and old images, bills per request, keeps point-in-time recovery and is encrypted", () => {
      devTemplate.hasResourceProperties("AWS::DynamoDB::Table", {
        StreamSpecification: { StreamViewType: "NEW_AND_OLD_IMAGES" },
        BillingMode: "PAY_PER_REQUEST",
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      });
    });

    it("is deleted with a sandbox stage's stack, and so are its log groups", () => {
      devTemplate.hasResource("AWS::DynamoDB::Table", {
        DeletionPolicy: "Delete",
        Properties: { DeletionProtectionEnabled: false },
      });
      for (const [id, logGroup] of Object.entries(resourcesOf(devTemplate, "AWS::Logs::LogGroup"))) {
        expect(logGroup.DeletionPolicy, id).toBe("Delete");
      }
    });

    it("is retained and protected from deletion in prod, and so are its log groups", () => {
      prodTemplate.hasResource("AWS::DynamoDB::Table", {
        DeletionPolicy: "Retain",
        UpdateReplacePolicy: "Retain",
        Properties: { DeletionProtectionEnabled: true },
      });
      for (const [id, logGroup] of Object.entries(resourcesOf(prodTemplate, "AWS::Logs::LogGroup"))) {
        expect(logGroup.DeletionPolicy, id).toBe("Retain");
      }
    });
  });

  describe("two stages in one app", () => {
    it("have different stack names", () => {
      expect(dev.stackName).toBe("PaymentApi-dev");
      expect(prod.stackName).toBe("PaymentApi-prod");
    });

    it("protect a persistent stage's stack from termination, not a sandbox's (nested stacks go with their root)", () => {
      expect(prod.terminationProtection).toBe(true);
      expect(dev.terminationProtection).toBe(false);
    });

    it("name no resource explicitly: CloudFormation generates the names", () => {
      for (const template of [devTemplate, prodTemplate]) {
        for (const [type, property] of Object.entries(PHYSICAL_NAME_PROPERTIES)) {
          for (const [id, found] of Object.entries(resourcesOf(template, type))) {
            expect(found.Properties, id).not.toHaveProperty(property);
          }
        }
      }
    });

    it("share no name", () => {
      const devNames = new Set(namesIn(devTemplate.toJSON().Resources));
      const prodNames = namesIn(prodTemplate.toJSON().Resources);
      expect(prodNames.filter((name) => devNames.has(name))).toEqual([]);
    });
  });

  describe("API stage", () => {
    it("throttles requests with the default limits", () => {
      devTemplate.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
        StageName: "$default",
        AutoDeploy: true,
        DefaultRouteSettings: {
          ThrottlingRateLimit: CONTEXT_DEFAULTS.rateLimit,
          ThrottlingBurstLimit: CONTEXT_DEFAULTS.burstLimit,
        },
      });
    });

    it("writes one JSON access log line per request to a log group of its own", () => {
      const [stage] = Object.values(resourcesOf(devTemplate, "AWS::ApiGatewayV2::Stage"));
      const settings = (stage as CfnResource).Properties.AccessLogSettings as {
        DestinationArn: unknown;
        Format: string;
      };
      const logGroup = resource(devTemplate, referencedId(settings.DestinationArn));
      expect(logGroup.Type).toBe("AWS::Logs::LogGroup");
      expect(logGroup.Properties.RetentionInDays).toBe(30);
      const functionLogGroups = Object.values(resourcesOf(devTemplate, "AWS::Lambda::Function")).map((fn) =>
        referencedId((fn.Properties.LoggingConfig as { LogGroup: unknown }).LogGroup),
      );
      expect(functionLogGroups).not.toContain(referencedId(settings.DestinationArn));
      expect(JSON.parse(settings.Format)).toMatchObject({
        requestId: "$context.requestId",
        ip: "$context.identity.sourceIp",
        routeKey: "$context.routeKey",
        status: "$context.status",
        latency: "$context.responseLatency",
      });
    });

    it("answers CORS preflights itself, from the topology's declaration: any origin, headers named one by one, no credentials", () => {
      const [api] = Object.values(resourcesOf(devTemplate, "AWS::ApiGatewayV2::Api"));
      const configuration = (api as CfnResource).Properties.CorsConfiguration as Record<string, unknown>;
      expect(configuration).toEqual({
        AllowOrigins: ["*"],
        AllowMethods: ["GET", "POST", "PUT", "DELETE"],
        AllowHeaders: [
          "authorization",
          "content-type",
          "idempotency-key",
          "api-version",
          "x-processout-js-version",
          "x-processout-client-secret",
        ],
        ExposeHeaders: [...cors.exposeHeaders],
        MaxAge: cors.maxAgeSeconds,
        AllowCredentials: false,
      });
    });

    it("outputs the API's URL and the table's name", () => {
      devTemplate.hasOutput("ApiUrl", {});
      devTemplate.hasOutput("TableName", {});
    });
  });

  describe("background work: webhook fan-out and delivery", () => {
    const deliveries = queues.webhookDeliveries;
    const [fanOut] = streamConsumers;
    const [deliver] = queueWorkers;
    const logicalIdOf = (construct: { node: { defaultChild?: unknown } }) =>
      dev.getLogicalId(construct.node.defaultChild as Parameters<Stack["getLogicalId"]>[0]);
    const queueId = () => logicalIdOf(dev.background.queues.webhookDeliveries.queue);
    const deadLettersId = () => logicalIdOf(dev.background.queues.webhookDeliveries.deadLetters);
    const tableId = () => Object.keys(resourcesOf(devTemplate, "AWS::DynamoDB::Table"))[0] as string;
    const mappingOf = (handler: string) => {
      const fnId = functionLogicalId(devTemplate, handler);
      const mappings = Object.values(resourcesOf(devTemplate, "AWS::Lambda::EventSourceMapping")).filter(
        (mapping) => referencedId(mapping.Properties.FunctionName) === fnId,
      );
      expect(mappings, handler).toHaveLength(1);
      return mappings[0] as CfnResource;
    };
    const actionsOn = (handler: string, prefix: string) =>
      statementsOf(devTemplate, functionLogicalId(devTemplate, handler)).filter((statement) =>
        [statement.Action].flat().some((action) => action.startsWith(prefix)),
      );

    it("declares the fan-out on the stream and the delivery worker on the delivery queue", () => {
      expect(fanOut?.handler).toBe("webhooks/fan-out");
      expect(fanOut?.sendsTo).toEqual(["webhookDeliveries"]);
      expect(deliver).toMatchObject({ handler: "webhooks/deliver", queue: "webhookDeliveries" });
    });

    it("encrypts both queues, refuses requests without TLS, and redrives after the schedule's last attempt", () => {
      for (const id of [queueId(), deadLettersId()]) {
        expect(resource(devTemplate, id).Properties.SqsManagedSseEnabled, id).toBe(true);
        const policies = Object.values(resourcesOf(devTemplate, "AWS::SQS::QueuePolicy")).filter((policy) =>
          (policy.Properties.Queues as unknown[]).some((queue) => referencedId(queue) === id),
        );
        const statements = policies.flatMap(
          (policy) =>
            (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
        );
        expect(statements, id).toContainEqual(
          expect.objectContaining({
            Effect: "Deny",
            Action: "sqs:*",
            Condition: { Bool: { "aws:SecureTransport": "false" } },
          }),
        );
      }
      expect(resource(devTemplate, queueId()).Properties).toMatchObject({
        VisibilityTimeout: deliveries.visibilityTimeoutSeconds,
        MessageRetentionPeriod: deliveries.retentionSeconds,
        RedrivePolicy: {
          deadLetterTargetArn: { "Fn::GetAtt": [deadLettersId(), "Arn"] },
          maxReceiveCount: MAX_ATTEMPTS,
        },
      });
      expect(resource(devTemplate, deadLettersId()).Properties.MessageRetentionPeriod).toBe(
        deliveries.deadLetterRetentionSeconds,
      );
      // Every retry of the schedule fits within the message's life in the queue.
      const retries = RETRY_DELAYS_SECONDS.reduce((total, delay) => total + delay, 0);
      expect(deliveries.retentionSeconds).toBeGreaterThan(
        retries + MAX_ATTEMPTS * deliveries.visibilityTimeoutSeconds,
      );
    });

    it("sends every alarm of the stage, and its recovery, to the alarm topic", () => {
      const topics = Object.keys(resourcesOf(devTemplate, "AWS::SNS::Topic"));
      expect(topics).toHaveLength(1);
      const alarms = Object.values(resourcesOf(devTemplate, "AWS::CloudWatch::Alarm"));
      expect(alarms.length).toBeGreaterThanOrEqual(3);
      for (const alarm of alarms) {
        expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topics[0] }]);
        expect(alarm.Properties.OKActions).toEqual([{ Ref: topics[0] }]);
      }
    });

    it("raises an alarm as soon as the dead-letter queue holds a message", () => {
      const alarms = Object.values(resourcesOf(devTemplate, "AWS::CloudWatch::Alarm")).filter(
        (alarm) =>
          alarm.Properties.MetricName === "ApproximateNumberOfMessagesVisible" &&
          JSON.stringify(alarm.Properties.Dimensions).includes(deadLettersId()),
      );
      expect(alarms).toHaveLength(1);
      expect((alarms[0] as CfnResource).Properties).toMatchObject({
        Namespace: "AWS/SQS",
        Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [deadLettersId(), "QueueName"] } }],
        Statistic: "Maximum",
        Threshold: 1,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
        EvaluationPeriods: 1,
        TreatMissingData: "notBreaching",
      });
    });

    it("feeds the fan-out with inserted events and resends only, from the table's stream, with partial failures", () => {
      const mapping = mappingOf("webhooks/fan-out");
      expect(mapping.Properties).toMatchObject({
        EventSourceArn: { "Fn::GetAtt": [tableId(), "StreamArn"] },
        StartingPosition: "TRIM_HORIZON",
        BatchSize: fanOut?.batchSize,
        FunctionResponseTypes: ["ReportBatchItemFailures"],
      });
      const filters = (mapping.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
      expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual([
        { eventName: ["INSERT"], dynamodb: { NewImage: { type: { S: ["event", "webhook_resend"] } } } },
      ]);
      // No retry limit and no maximum record age: a failing batch is retried, never skipped.
      expect(mapping.Properties).not.toHaveProperty("MaximumRetryAttempts");
      expect(mapping.Properties).not.toHaveProperty("MaximumRecordAgeInSeconds");
      const iteratorAlarms = Object.values(resourcesOf(devTemplate, "AWS::CloudWatch::Alarm")).filter(
        (alarm) => alarm.Properties.MetricName === "IteratorAge",
      );
      // Every stream consumer (the fan-out, the exports' relay) has its iterator age alarm.
      expect(iteratorAlarms.map((alarm) => alarm.Properties.Dimensions)).toEqual(
        expect.arrayContaining([
          [{ Name: "FunctionName", Value: { Ref: functionLogicalId(devTemplate, "webhooks/fan-out") } }],
        ]),
      );
      expect(iteratorAlarms).toHaveLength(streamConsumers.length);
    });

    it("feeds the worker from the delivery queue in batches, with partial failures and bounded concurrency", () => {
      expect(mappingOf("webhooks/deliver").Properties).toMatchObject({
        EventSourceArn: { "Fn::GetAtt": [queueId(), "Arn"] },
        BatchSize: deliver?.batchSize,
        FunctionResponseTypes: ["ReportBatchItemFailures"],
        ScalingConfig: { MaximumConcurrency: deliver?.maxConcurrency },
      });
      expect(deliveries.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * (deliver?.timeoutSeconds ?? 0));
    });

    it("lets the fan-out read the stream, get, put and update table items, and send to the queue: nothing more", () => {
      const handler = "webhooks/fan-out";
      const on = (granted: unknown) => (statement: Statement) =>
        JSON.stringify(statement.Resource) === JSON.stringify(granted);
      const dynamodb = actionsOn(handler, "dynamodb:");
      const table = dynamodb.filter(on({ "Fn::GetAtt": [tableId(), "Arn"] }));
      const stream = dynamodb.filter(on({ "Fn::GetAtt": [tableId(), "StreamArn"] }));
      // ListStreams names no stream: IAM only grants it on "*".
      const everything = dynamodb.filter(on("*"));
      expect(table.length + stream.length + everything.length).toBe(dynamodb.length);
      expect(actionsOf(table)).toEqual(["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]);
      expect(actionsOf(stream).sort()).toEqual([
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
      ]);
      expect(actionsOf(everything)).toEqual(["dynamodb:ListStreams"]);
      const sqs = actionsOn(handler, "sqs:");
      expect(sqs.map((statement) => statement.Resource)).toEqual([{ "Fn::GetAtt": [queueId(), "Arn"] }]);
      expect(actionsOf(sqs).sort()).toEqual(["sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"]);
      expect(environmentOf(resource(devTemplate, functionLogicalId(devTemplate, handler)))).toMatchObject({
        TABLE_NAME: { Ref: tableId() },
        [deliveries.urlVariable]: { Ref: queueId() },
      });
    });

    it("lets the worker get, put and update table items and consume the queue, but not send to it or read the stream", () => {
      const handler = "webhooks/deliver";
      expect(actionsOn(handler, "dynamodb:")).toEqual([
        expect.objectContaining({
          Action: ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"],
          Resource: { "Fn::GetAtt": [tableId(), "Arn"] },
        }),
      ]);
      const sqs = actionsOn(handler, "sqs:");
      expect(sqs.map((statement) => statement.Resource)).toEqual([{ "Fn::GetAtt": [queueId(), "Arn"] }]);
      expect(actionsOf(sqs)).toEqual(
        expect.arrayContaining(["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"]),
      );
      expect(actionsOf(sqs)).not.toContain("sqs:SendMessage");
      expect(environmentOf(resource(devTemplate, functionLogicalId(devTemplate, handler)))).toMatchObject({
        TABLE_NAME: { Ref: tableId() },
        [deliveries.urlVariable]: { Ref: queueId() },
      });
    });

    it("gives no API route a queue: a resend is a table write the stream turns into deliveries", () => {
      for (const route of routes) {
        expect(actionsOn(route.handler, "sqs:"), routeKey(route)).toEqual([]);
        const variables = environmentOf(resource(devTemplate, functionLogicalId(devTemplate, route.handler)));
        expect(variables, routeKey(route)).not.toHaveProperty(deliveries.urlVariable);
      }
      expect(routes.find((route) => routeKey(route) === "POST /events/{event_id}/webhooks")?.table).toBe(
        "write",
      );
    });
  });

  describe("scheduled jobs: auto_capture_at on EventBridge Scheduler", () => {
    const idOf = (construct: IConstruct) => dev.getLogicalId(construct.node.defaultChild as CfnElement);
    const groupId = () => dev.getLogicalId(dev.scheduledJobs.group);
    const jobFunctionId = () => functionLogicalId(devTemplate, scheduledJobs.captureInvoice.handler);
    const routeFunctionId = (handler: string) => functionLogicalId(devTemplate, handler);
    const schedulerStatements = (handler: string) =>
      statementsOf(devTemplate, routeFunctionId(handler)).filter((statement) =>
        [statement.Action]
          .flat()
          .some((action) => action.startsWith("scheduler:") || action === "iam:PassRole"),
      );

    it("lets authorize create and delete the schedules of the stage's group only, and pass exactly the scheduler role to the scheduler", () => {
      const statements = schedulerStatements("invoices/authorize");
      const schedules = statements.find((statement) =>
        actionsOf([statement]).includes("scheduler:CreateSchedule"),
      );
      expect(actionsOf([schedules as Statement]).sort()).toEqual([
        "scheduler:CreateSchedule",
        "scheduler:DeleteSchedule",
      ]);
      expect(JSON.stringify(schedules?.Resource)).toContain(`{"Ref":"${groupId()}"},"/*"`);
      expect(JSON.stringify(schedules?.Resource)).toContain(":schedule/");
      const passRole = statements.find((statement) => actionsOf([statement]).includes("iam:PassRole"));
      expect(passRole).toMatchObject({
        Effect: "Allow",
        Resource: { "Fn::GetAtt": [idOf(dev.scheduledJobs.role), "Arn"] },
        Condition: { StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" } },
      });
      expect(statements).toHaveLength(2);
    });

    it("tells authorize how to schedule: the group, the role, the capture job's function and the dead-letter queue", () => {
      const variables = environmentOf(resource(devTemplate, routeFunctionId("invoices/authorize")));
      expect(variables).toMatchObject({
        SCHEDULER: "eventbridge",
        SCHEDULE_GROUP: { Ref: groupId() },
        SCHEDULER_ROLE_ARN: { "Fn::GetAtt": [idOf(dev.scheduledJobs.role), "Arn"] },
        CAPTURE_JOB_FUNCTION_ARN: { "Fn::GetAtt": [jobFunctionId(), "Arn"] },
        SCHEDULE_DLQ_ARN: { "Fn::GetAtt": [idOf(dev.scheduledJobs.deadLetters), "Arn"] },
      });
    });

    it("lets void only delete schedules, the routes that schedule jobs (auto captures, subscriptions, a settled day's close) schedule them, and no other route touch the scheduler", () => {
      for (const route of routes) {
        const actions = actionsOf(schedulerStatements(route.handler)).sort();
        const expected =
          route.scheduler === "schedule"
            ? ["iam:PassRole", "scheduler:CreateSchedule", "scheduler:DeleteSchedule"]
            : route.scheduler === "cancel"
              ? ["scheduler:DeleteSchedule"]
              : [];
        expect(actions, routeKey(route)).toEqual(expected);
        const variables = environmentOf(resource(devTemplate, routeFunctionId(route.handler)));
        expect(variables.SCHEDULER, routeKey(route)).toBe(route.scheduler ? "eventbridge" : undefined);
        if (route.scheduler !== "schedule")
          expect(variables, routeKey(route)).not.toHaveProperty("SCHEDULER_ROLE_ARN");
      }
      expect(
        routes
          .filter((route) => route.scheduler)
          .map(routeKey)
          .sort(),
      ).toEqual([
        "DELETE /subscriptions/{subscription_id}",
        "POST /invoices/{invoice_id}/authorize",
        "POST /invoices/{invoice_id}/capture",
        "POST /invoices/{invoice_id}/increment_authorization",
        "POST /invoices/{invoice_id}/native-payment",
        "POST /invoices/{invoice_id}/refunds",
        "POST /invoices/{invoice_id}/void",
        "POST /sandbox/clock",
        "POST /subscriptions",
        "POST /transactions/{transaction_id}/refunds",
        "PUT /invoices/{invoice_id}/sync-with-psp",
        "PUT /subscriptions/{subscription_id}",
      ]);
    });

    it("has a scheduler role that only EventBridge Scheduler of this account assumes, and that may only invoke the scheduled jobs and dead-letter", () => {
      const role = resource(devTemplate, idOf(dev.scheduledJobs.role));
      expect(role.Properties.AssumeRolePolicyDocument).toMatchObject({
        Statement: [
          {
            Action: "sts:AssumeRole",
            Effect: "Allow",
            Principal: { Service: "scheduler.amazonaws.com" },
            Condition: { StringEquals: { "aws:SourceAccount": { Ref: "AWS::AccountId" } } },
          },
        ],
      });
      const statements = Object.values(resourcesOf(devTemplate, "AWS::IAM::Policy"))
        .filter((policy) =>
          (policy.Properties.Roles as unknown[]).some(
            (ref) => referencedId(ref) === idOf(dev.scheduledJobs.role),
          ),
        )
        .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
      expect(statements).toEqual([
        {
          Effect: "Allow",
          Action: "lambda:InvokeFunction",
          Resource: Object.values(scheduledJobs).map((job) => ({
            "Fn::GetAtt": [functionLogicalId(devTemplate, job.handler), "Arn"],
          })),
        },
        expect.objectContaining({
          Effect: "Allow",
          Resource: { "Fn::GetAtt": [idOf(dev.scheduledJobs.deadLetters), "Arn"] },
        }),
      ]);
      expect([statements[1]?.Action].flat()).toContain("sqs:SendMessage");
    });

    it("runs the capture job with table write access, opening the vault only, scheduling only its day's close; and encrypts its dead-letter queue and refuses it without TLS", () => {
      const job = resource(devTemplate, jobFunctionId());
      const variables = environmentOf(job);
      expect(variables).toHaveProperty("TABLE_NAME");
      // It may open a gateway configuration's secret settings, never seal or fingerprint.
      expect(variables).toHaveProperty("CARD_KEY_ID");
      expect(variables).not.toHaveProperty("CARD_FINGERPRINT_KEY_ID");
      expect(variables).toMatchObject({
        SCHEDULER: "eventbridge",
        DAILY_CLOSE_JOB_FUNCTION_ARN: expect.anything(),
      });
      expect(variables).not.toHaveProperty("SUBSCRIPTION_JOB_FUNCTION_ARN");
      expect(actionsOf(statementsOf(devTemplate, jobFunctionId()))).toContain("dynamodb:PutItem");
      expect(
        actionsOf(statementsOf(devTemplate, jobFunctionId())).filter((action) => action.startsWith("kms:")),
      ).toEqual(["kms:Decrypt"]);
      expect(resource(devTemplate, idOf(dev.scheduledJobs.deadLetters)).Properties.SqsManagedSseEnabled).toBe(
        true,
      );
      const policies = Object.values(resourcesOf(devTemplate, "AWS::SQS::QueuePolicy")).filter((policy) =>
        (policy.Properties.Queues as unknown[]).some(
          (queue) => referencedId(queue) === idOf(dev.scheduledJobs.deadLetters),
        ),
      );
      expect(JSON.stringify(policies)).toContain('"aws:SecureTransport":"false"');
    });

    it("passes every route's function the API's own endpoint as API_URL (challenge links)", () => {
      for (const route of routes) {
        const variables = environmentOf(resource(devTemplate, routeFunctionId(route.handler)));
        expect(variables.API_URL, routeKey(route)).toEqual({ "Fn::GetAtt": [idOf(dev.api), "ApiEndpoint"] });
      }
    });
  });

  describe("cdk-nag AwsSolutions checks", () => {
    it("report no unacknowledged error or warning for a sandbox or a persistent stage", () => {
      for (const stack of [dev, prod]) {
        const report = new AwsSolutionsChecks().validateScope(stack);
        expect(report.violations, stack.stackName).toEqual([]);
      }
    });

    it("report nothing either for a stack deployed to a known account and region, as `cdk deploy` builds it", () => {
      const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
      const stack = new PaymentStack(app, "PaymentApi-env", {
        stage: "env",
        env: { account: "123456789012", region: "eu-west-1" },
      });
      expect(new AwsSolutionsChecks().validateScope(stack).violations).toEqual([]);
    });

    it("are live: an unacknowledged wildcard is reported", () => {
      const stack = new Stack(new App(), "Probe");
      const role = new Role(stack, "Role", { assumedBy: new ServicePrincipal("lambda.amazonaws.com") });
      role.addToPolicy(new PolicyStatement({ actions: ["dynamodb:GetItem"], resources: ["*"] }));
      const report = new AwsSolutionsChecks().validateScope(stack);
      expect(report.violations.map((violation) => violation.ruleName)).toContain(
        "AwsSolutions-IAM5[Resource::*]",
      );
    });

    it("check every nested stack as `cdk synth` does (bin/app.ts): the stage synthesizes, and a finding in a route stack fails it", () => {
      const withChecks = (offend: boolean) => {
        const app = new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false });
        const stack = new PaymentStack(app, "PaymentApi-nag", { stage: "nag" });
        const [routeStack] = stack.routeStacks;
        // No dead-letter queue and no TLS enforcement: AwsSolutions-SQS3 and -SQS4.
        if (offend && routeStack) new Queue(routeStack, "Unchecked");
        Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
        return { app, path: `${routeStack?.node.path}/Unchecked/Resource` };
      };
      expect(() => withChecks(false).app.synth()).not.toThrow();
      const { app, path } = withChecks(true);
      expect(() => app.synth()).toThrow(/AwsSolutions-SQS3/);
      const findings = new AwsSolutionsChecks()
        .validateScope(app)
        .violations.flatMap((violation) =>
          violation.violatingResources.map((found) => `${violation.ruleName} ${found.constructPath}`),
        );
      expect(findings.sort()).toEqual([`AwsSolutions-SQS3 ${path}`, `AwsSolutions-SQS4 ${path}`]);
    });
  });

  describe("configuration", () => {
    it("reads the checkout URL and the throttling limits from context", () => {
      const configured = new App({
        context: {
          ...SKIP_BUNDLING,
          checkoutUrl: "https://pay.example.org",
          rateLimit: "50",
          burstLimit: "80",
        },
        builtinCloudFormationValidation: false,
      });
      const stack = new PaymentStack(configured, "PaymentApi-ctx", { stage: "ctx" });
      const template = wholeTemplate(stack);
      template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
        DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 80 },
      });
      for (const fn of Object.values(resourcesOf(template, "AWS::Lambda::Function"))) {
        expect(environmentOf(fn).CHECKOUT_URL).toBe("https://pay.example.org");
      }
    });

    it("accepts stage names that fit in a stack name and rejects the others with the rule", () => {
      expect(validateStage("dev")).toBe("dev");
      expect(validateStage("alice-2")).toBe("alice-2");
      for (const bad of [undefined, "", "Dev", "2dev", "dev_1", "a-stage-name-over-20-chars"]) {
        expect(() => validateStage(bad), String(bad)).toThrow(/Invalid stage/);
      }
      expect(() => new PaymentStack(new App(), "PaymentApi-x", { stage: "Not Valid" })).toThrow(
        /Invalid stage/,
      );
    });
  });
});
