import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Tags, Validations } from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import {
  CorsHttpMethod,
  HttpApi,
  HttpRoute,
  HttpRouteKey,
  HttpStage,
  LogGroupLogDestination,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { Alarm } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from "aws-cdk-lib/aws-dynamodb";
import { Key, KeySpec, KeyUsage } from "aws-cdk-lib/aws-kms";
import type { CfnFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import type { Construct } from "constructs";
import { TABLE } from "../shared/db/table.ts";
import { ApiFunction, type CardVaultKeys } from "./api-function.ts";
import { type BuiltBackgroundWork, buildBackgroundWork } from "./background.ts";
import { CAPACITY, type Capacity, type CapacityProfile, capacityProfileOf } from "./capacity.ts";
import { buildExportFiles } from "./export-files.ts";
import { type BuiltMonitoring, buildMonitoring } from "./monitoring.ts";
import { type BuiltRecurringJobs, buildRecurringJobs } from "./recurring-jobs.ts";
import { groupRoutes, RouteStack, type RouteStackInputs } from "./route-stacks.ts";
import { type BuiltScheduledJobs, buildScheduledJobs } from "./scheduling.ts";
import { cors, topology as declaredTopology, fallbackRoute, functionId, type Topology } from "./topology.ts";

/** Stages whose data must outlive the stack: their table and logs are retained. */
export const PERSISTENT_STAGES: readonly string[] = ["prod", "staging"];

/** A stage name becomes part of the stack name: lower case, starting with a letter, at most 20 characters. */
const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,19}$/;

/** Defaults for the context values the stack reads (`cdk synth -c name=value` overrides them). */
export const CONTEXT_DEFAULTS = {
  /** Steady-state requests per second the API's stage accepts (a sandbox stage's; `prod`: `CAPACITY.peak`). */
  rateLimit: CAPACITY.sandbox.api.rateLimit,
  /** Requests the stage accepts in a burst above the rate (a sandbox stage's). */
  burstLimit: CAPACITY.sandbox.api.burstLimit,
  /** Stripe's API (`-c stripeApiUrl=…` points a stage at another, a double's). */
  stripeApiUrl: "https://api.stripe.com",
} as const;

export function isPersistentStage(stage: string): boolean {
  return PERSISTENT_STAGES.includes(stage);
}

/** Returns `stage` when it is a valid stage name, and throws an error that says why it is not otherwise. */
export function validateStage(stage: unknown): string {
  if (typeof stage !== "string" || !STAGE_PATTERN.test(stage)) {
    throw new Error(
      `Invalid stage ${JSON.stringify(stage)}: pass -c stage=<name>, where the name matches ${STAGE_PATTERN} ` +
        "(lower-case letters, digits and dashes, starting with a letter, at most 20 characters)",
    );
  }
  return stage;
}

export interface PaymentStackProps extends StackProps {
  /** `prod` and `staging` are persistent; any other name is a developer's sandbox stage. */
  stage: string;
  /** What to deploy. Default: the declarations of `lib/topology.ts` (tests pass synthetic ones). */
  topology?: Topology;
}

/**
 * The whole deployment of one stage, built from the route table (`lib/topology.ts`) and the
 * single-table definition (`shared/db/table.ts`). This root stack holds what the routes share (the
 * table, the card keys, the HTTP API with its stage and `$default` route, queues, jobs, alarms and
 * outputs); the routes live in nested stacks, one per resource group (`lib/route-stacks.ts`), so
 * that no stack comes near CloudFormation's 500 resources.
 *
 * Context values: `checkoutUrl` (default: the API serves the checkout pages itself), `rateLimit` and
 * `burstLimit` (default 100 and 200 requests per second) for the API's stage.
 */
export class PaymentStack extends Stack {
  readonly stage: string;
  /** What the stage is sized for (`lib/capacity.ts`): `prod` for one project's peak, others as sandboxes. */
  readonly capacityProfile: CapacityProfile;
  readonly table: Table;
  readonly cardKeys: CardVaultKeys;
  /** The export files (`lib/export-files.ts`), granted to the functions that declare `exportFiles`. */
  readonly exportFiles: Bucket;
  readonly api: HttpApi;
  readonly apiStage: HttpStage;
  /** Every alarm of the stage notifies this topic (and `alarmEmail`, when given). */
  readonly alarms: Topic;
  /** The stage's dashboard, and the alarms on business figures and throttles (`lib/monitoring.ts`). */
  readonly monitoring: BuiltMonitoring;
  /** Queues, stream consumers and queue workers of the topology (webhook fan-out and delivery). */
  readonly background: BuiltBackgroundWork;
  /** The schedule group, role, dead-letter queue and functions of the scheduled jobs (`auto_capture_at`). */
  readonly scheduledJobs: BuiltScheduledJobs;
  /** The functions and schedules of the recurring jobs. */
  readonly recurringJobs: BuiltRecurringJobs;
  /** The nested stacks of the routes (`lib/route-stacks.ts`), one or more per resource group. */
  readonly routeStacks: readonly RouteStack[];
  /** The function of each handler module, by topology `handler` (the fallback included), in any stack. */
  readonly functions: ReadonlyMap<string, ApiFunction>;

  constructor(scope: Construct, id: string, props: PaymentStackProps) {
    const { stage: requestedStage, topology = declaredTopology, ...stackProps } = props;
    const stage = validateStage(requestedStage);
    const persistent = isPersistentStage(stage);
    super(scope, id, {
      description: `Payment API, ${persistent ? "persistent" : "sandbox"} stage ${stage}`,
      terminationProtection: persistent,
      ...stackProps,
    });
    this.stage = stage;
    Tags.of(this).add("service", "payment-api");
    Tags.of(this).add("stage", stage);

    this.capacityProfile = capacityProfileOf(stage, this.node.tryGetContext("capacity"));
    const capacity = CAPACITY[this.capacityProfile];
    const removalPolicy = persistent ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.table = this.buildTable(removalPolicy, persistent, capacity.warmThroughput);
    this.cardKeys = this.buildCardKeys(removalPolicy);
    this.exportFiles = buildExportFiles(this, removalPolicy);

    // Invoices' checkout links are `<API>/checkout/…` (served by the API itself) unless `checkoutUrl`
    // names another address in front of it.
    const checkoutUrl = this.contextString("checkoutUrl");
    // Where the providers are comes from the deployment, never from a merchant's settings: Stripe's
    // API (`stripeApiUrl`, a double's for a test stage); Adyen's Checkout API only when
    // `adyenCheckoutApiUrl` names one for every environment (a double's), since otherwise a sandbox
    // goes to Adyen's test endpoint and a live environment to its own live_url_prefix.
    const adyenCheckoutUrl = this.contextString("adyenCheckoutApiUrl");
    const routeEnvironment = {
      STAGE: stage,
      POWERTOOLS_SERVICE_NAME: "payment-api",
      LOG_LEVEL: "INFO",
      STRIPE_API_URL: this.contextString("stripeApiUrl") ?? CONTEXT_DEFAULTS.stripeApiUrl,
      ...(adyenCheckoutUrl ? { ADYEN_CHECKOUT_API_URL: adyenCheckoutUrl } : {}),
      ...(checkoutUrl ? { CHECKOUT_URL: checkoutUrl } : {}),
    };

    this.api = new HttpApi(this, "HttpApi", {
      // Not a physical name CloudFormation could collide on (API names need not be unique); it
      // only tells the stages apart in the console.
      apiName: this.stackName,
      description: `Payment API (${stage})`,
      createDefaultStage: false,
      // API Gateway answers every preflight itself and adds the allowed origin to every answer.
      corsPreflight: {
        allowOrigins: [...cors.allowOrigins],
        allowMethods: cors.allowMethods.map((method) => CorsHttpMethod[method]),
        allowHeaders: [...cors.allowHeaders],
        exposeHeaders: [...cors.exposeHeaders],
        maxAge: Duration.seconds(cors.maxAgeSeconds),
        allowCredentials: false,
      },
    });

    // Links the API hands out (3DS challenge pages, invoices' checkout pages, also in events that jobs
    // record) are built from API_URL: the API's endpoint is an attribute of the API alone, so no
    // function naming it makes a dependency cycle. Route stacks pass it on as a parameter of theirs.
    const environment = { ...routeEnvironment, API_URL: this.api.apiEndpoint };

    this.scheduledJobs = buildScheduledJobs(this, {
      jobs: topology.scheduledJobs,
      table: this.table,
      cardKeys: this.cardKeys,
      environment,
      removalPolicy,
    });
    this.recurringJobs = buildRecurringJobs(this, {
      jobs: topology.recurringJobs,
      table: this.table,
      cardKeys: this.cardKeys,
      scheduling: this.scheduledJobs.refs,
      deadLetters: this.scheduledJobs.deadLetters,
      environment,
      removalPolicy,
    });
    const functions = new Map<string, ApiFunction>([
      ...this.scheduledJobs.functions,
      ...this.recurringJobs.functions,
    ]);
    const routeInputs: RouteStackInputs = {
      tableName: this.table.tableName,
      apiId: this.api.apiId,
      apiEndpoint: this.api.apiEndpoint,
      cardKeyArns: {
        encryption: this.cardKeys.encryption.keyArn,
        fingerprint: this.cardKeys.fingerprint.keyArn,
      },
      scheduling: this.scheduledJobs.refs,
    };
    this.routeStacks = groupRoutes(topology.routes).map(
      (group) =>
        new RouteStack(this, group.id, {
          routes: group.routes,
          inputs: routeInputs,
          environment: routeEnvironment,
          removalPolicy,
          description: `Payment API (${stage}): ${group.routes.length} routes of functions/${group.resource}/`,
        }),
    );
    for (const routeStack of this.routeStacks) {
      for (const [handler, fn] of routeStack.functions) functions.set(handler, fn);
    }

    // The fallback reads nothing: no table grant, no TABLE_NAME.
    const fallback = new ApiFunction(this, functionId(fallbackRoute.handler), {
      handler: fallbackRoute.handler,
      environment,
      logRemovalPolicy: removalPolicy,
    });
    functions.set(fallbackRoute.handler, fallback);
    const defaultRoute = new HttpRoute(this, "DefaultRoute", {
      httpApi: this.api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration("DefaultIntegration", fallback),
    });
    Validations.of(defaultRoute).acknowledge({
      id: "AwsSolutions-APIG4",
      reason:
        "$default only answers 404 to requests no route matches; it reads no data, so there is nothing to authorize.",
    });
    this.background = buildBackgroundWork(this, {
      topology,
      table: this.table,
      exportFiles: this.exportFiles,
      cardKeys: this.cardKeys,
      environment,
      removalPolicy,
      maxConcurrency: capacity.maxConcurrency,
    });
    for (const [handler, fn] of this.background.functions) functions.set(handler, fn);
    this.functions = functions;
    reserveConcurrency(functions, capacity.reservedConcurrency);

    this.apiStage = this.buildStage(removalPolicy, capacity.api);

    this.monitoring = buildMonitoring(this, {
      stage,
      table: this.table,
      apiStage: this.apiStage,
      functions,
      concurrencyOf: [
        ...topology.streamConsumers.map((consumer) => consumer.handler),
        ...topology.queueWorkers.map((worker) => worker.handler),
        ...Object.values(topology.scheduledJobs).map((job) => job.handler),
        ...Object.values(topology.recurringJobs).map((job) => job.handler),
      ],
      unreservedConcurrency:
        this.contextNumber("accountConcurrency", capacity.accountConcurrency) -
        Object.values(capacity.reservedConcurrency).reduce((sum, reserved) => sum + reserved, 0),
      webhookQueue: this.background.queues.webhookDeliveries.queue,
      otherAlarms: this.node.findAll().filter((construct): construct is Alarm => construct instanceof Alarm),
    });
    this.alarms = this.notifyAlarms();

    new CfnOutput(this, "ApiUrl", { value: this.apiStage.url, description: "Base URL of the API" });
    new CfnOutput(this, "AlarmTopicArn", { value: this.alarms.topicArn, description: "Where alarms go" });
    new CfnOutput(this, "TableName", { value: this.table.tableName, description: "The single table" });
  }

  private buildTable(
    removalPolicy: RemovalPolicy,
    persistent: boolean,
    warmThroughput: Capacity["warmThroughput"],
  ): Table {
    const table = new Table(this, "Table", {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      // The event outbox is delivered from the table's stream.
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy,
      deletionProtection: persistent,
      ...(warmThroughput.table ? { warmThroughput: warmThroughput.table } : {}),
    });
    for (const index of Object.values(TABLE.indexes)) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: index.projection === "ALL" ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
        ...(warmThroughput.indexes?.[index.name]
          ? { warmThroughput: warmThroughput.indexes[index.name] }
          : {}),
      });
    }
    return table;
  }

  /**
   * The card vault's keys: card secrets are sealed under data keys that `encryption` wraps (rotated
   * yearly by KMS), fingerprints are HMACs under `fingerprint`. Kept with the data they protect on
   * persistent stages: deleting them would make every stored card unreadable.
   */
  private buildCardKeys(removalPolicy: RemovalPolicy): CardVaultKeys {
    const encryption = new Key(this, "CardKey", {
      description: `Payment API (${this.stage}): wraps the data keys of card numbers and CVCs`,
      enableKeyRotation: true,
      removalPolicy,
      pendingWindow: Duration.days(removalPolicy === RemovalPolicy.RETAIN ? 30 : 7),
    });
    const fingerprint = new Key(this, "CardFingerprintKey", {
      description: `Payment API (${this.stage}): HMAC key of card fingerprints`,
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy,
      pendingWindow: Duration.days(removalPolicy === RemovalPolicy.RETAIN ? 30 : 7),
    });
    return { encryption, fingerprint };
  }

  private buildStage(removalPolicy: RemovalPolicy, limits: Capacity["api"]): HttpStage {
    const accessLogs = new LogGroup(this, "AccessLogs", {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy,
    });
    return new HttpStage(this, "DefaultStage", {
      httpApi: this.api,
      stageName: "$default",
      autoDeploy: true,
      throttle: {
        rateLimit: this.contextNumber("rateLimit", limits.rateLimit),
        burstLimit: this.contextNumber("burstLimit", limits.burstLimit),
      },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        // One JSON object per request; no header or body is logged (they carry credentials and card data).
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: "$context.requestId",
            ip: "$context.identity.sourceIp",
            requestTime: "$context.requestTime",
            httpMethod: "$context.httpMethod",
            routeKey: "$context.routeKey",
            path: "$context.path",
            protocol: "$context.protocol",
            status: "$context.status",
            responseLength: "$context.responseLength",
            latency: "$context.responseLatency",
            integrationLatency: "$context.integrationLatency",
            integrationStatus: "$context.integrationStatus",
            integrationError: "$context.integrationErrorMessage",
            userAgent: "$context.identity.userAgent",
          }),
        ),
      },
    });
  }

  /**
   * One topic for every alarm built above (a dead-letter queue holding a message, the stream
   * consumer falling behind): nothing that gives up for good may go unnoticed.
   */
  private notifyAlarms(): Topic {
    const topic = new Topic(this, "AlarmTopic", { enforceSSL: true });
    Validations.of(topic).acknowledge({
      id: "AwsSolutions-SNS2",
      reason:
        "Alarm notifications carry no customer or card data, and CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key.",
    });
    const email: unknown = this.node.tryGetContext("alarmEmail");
    if (typeof email === "string" && email !== "") topic.addSubscription(new EmailSubscription(email));
    const action = new SnsAction(topic);
    for (const construct of this.node.findAll()) {
      if (construct instanceof Alarm) {
        construct.addAlarmAction(action);
        construct.addOkAction(action);
      }
    }
    return topic;
  }

  private contextString(key: string): string | undefined {
    const value: unknown = this.node.tryGetContext(key);
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value === "")
      throw new Error(`Context ${key} must be a non-empty string`);
    return value;
  }

  /** `-c name=value` arrives as a string, cdk.json may hold a number: both are accepted. */
  private contextNumber(key: string, fallback: number): number {
    const value: unknown = this.node.tryGetContext(key);
    if (value === undefined) return fallback;
    const number = typeof value === "string" ? Number(value) : value;
    if (typeof number !== "number" || !Number.isInteger(number) || number <= 0) {
      throw new Error(`Context ${key} must be a positive integer, got ${JSON.stringify(value)}`);
    }
    return number;
  }
}

/**
 * Reserves `reserved[handler]` of the account's concurrency for the function of each handler named
 * (and caps it there). A handler no function runs is an error: a renamed job must not silently lose
 * its cap.
 */
function reserveConcurrency(
  functions: ReadonlyMap<string, ApiFunction>,
  reserved: Readonly<Record<string, number>>,
): void {
  for (const [handler, concurrency] of Object.entries(reserved)) {
    const fn = functions.get(handler);
    if (!fn) throw new Error(`Reserved concurrency for ${handler}, which no function runs`);
    (fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions = concurrency;
  }
}
