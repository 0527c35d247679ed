import { Duration, type Stack } from "aws-cdk-lib";
import type { HttpStage } from "aws-cdk-lib/aws-apigatewayv2";
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  PeriodOverride,
  SearchExpression,
  TextWidget,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import { TABLE } from "../shared/db/table.ts";
import { METRICS_NAMESPACE } from "../shared/observability/metrics.ts";
import type { ApiFunction } from "./api-function.ts";

/**
 * The stage's dashboard and the alarms on the business figures and the throttles, built from the
 * metrics the functions emit (CloudWatch embedded metric format, namespace `PaymentApi`, every
 * metric with the dimension `stage`: `shared/observability/metrics.ts`) and from the services'
 * own metrics (API Gateway, Lambda, DynamoDB). Every alarm built here, like every other alarm of the
 * stack, notifies the stage's alarm topic (`PaymentStack.notifyAlarms`).
 *
 * Figures kept per value not known at deploy time (a route, a gateway configuration, a job) are
 * graphed with SEARCH expressions, and alarmed on with Metrics Insights queries grouped by that
 * dimension: one alarm whose contributors are the configurations (or jobs) in breach, each named in
 * the notification, and any configuration created later is watched without a deployment.
 */

/** The figures of the metrics contract, as `shared/observability/metrics.ts` records them. */
export const METRIC = {
  requests: "Requests",
  serverErrors: "ServerErrors",
  clientErrors: "ClientErrors",
  latency: "Latency",
  payments: "Payments",
  approved: "Approved",
  providerLatency: "ProviderLatency",
  providerErrors: "ProviderErrors",
  webhookDeliveries: "WebhookDeliveries",
  webhookFailures: "WebhookFailures",
  webhookDeadLetters: "WebhookDeadLetters",
  webhookLag: "WebhookLag",
  schedulerLag: "SchedulerLag",
  schedulerFailures: "SchedulerFailures",
  recoverySettlements: "RecoverySettlements",
} as const;

/**
 * Each alarm's threshold and how long it must hold, and why. Periods are in seconds. `datapoints`
 * of the last `evaluationPeriods` must breach (M out of N).
 */
export const ALARM_SETTINGS = {
  /**
   * A configuration's authorization rate (Average of `Approved`: approvals over approvals and
   * declines) below 60 % for three 5-minute periods in a row. Card approval rates run at 80 to 95 %;
   * a fall below 60 % held for 15 minutes is an issuer or provider incident (or a broken integration)
   * rather than a bad batch of cards, and 5-minute periods give a configuration of a few payments a
   * minute enough tries for the average to mean something.
   */
  authorizationRate: { threshold: 0.6, periodSeconds: 300, evaluationPeriods: 3, datapoints: 3 },
  /**
   * More than 10 % of a configuration's provider calls failing (network, timeout, 5xx, unreadable
   * answer) in two 5-minute periods in a row. Routing's breakers already route around a failing
   * configuration; this tells a person that one is failing, and for more than a blip.
   */
  providerErrors: { threshold: 0.1, periodSeconds: 300, evaluationPeriods: 2, datapoints: 2 },
  /**
   * More than 1 % of the API's answers are 5xx in 3 of 5 minutes, counted by API Gateway (so a
   * throttled or timed-out function, which never answers itself, counts too), in minutes of at least
   * `minimumRequests` requests: one 500 among a sandbox's three requests is not a rate.
   */
  serverErrorRate: {
    threshold: 0.01,
    minimumRequests: 20,
    periodSeconds: 60,
    evaluationPeriods: 5,
    datapoints: 3,
  },
  /** A webhook delivery given up after its last attempt: at once, as its dead-letter queue's alarm. */
  webhookDeadLetters: { threshold: 1, periodSeconds: 60, evaluationPeriods: 1, datapoints: 1 },
  /**
   * Half of the ~120,000 messages a standard queue holds in flight, for 2 minutes: a delivery
   * waiting for its retry is in flight (its visibility is the retry's delay), and past the quota the
   * worker receives nothing more, for every project (README: Capacity).
   */
  webhookInFlight: { threshold: 60_000, periodSeconds: 60, evaluationPeriods: 2, datapoints: 2 },
  /**
   * A scheduled job kind failing in three 5-minute periods in a row. One failure is retried (and a
   * job that gives up lands in the schedule dead-letter queue, which alarms at once); failures that
   * persist for 15 minutes mean captures or renewals are not happening.
   */
  schedulerFailures: { threshold: 1, periodSeconds: 300, evaluationPeriods: 3, datapoints: 3 },
  /**
   * DynamoDB throttle events on the table or any index in 3 of 5 minutes. The SDK retries a
   * throttled request (so one burst is absorbed), but throttles minute after minute are a hot
   * partition or a table past its warm throughput, and requests are failing or slowing.
   */
  dynamoDbThrottles: { threshold: 1, periodSeconds: 60, evaluationPeriods: 5, datapoints: 3 },
  /**
   * Lambda throttles (account-wide: Lambda counts them per function and for the account, and the
   * account's concurrency is what all functions share) in 3 of 5 minutes: a synchronous invocation
   * throttled is a 5xx for a merchant; a background one is retried, but its cap is binding.
   */
  lambdaThrottles: { threshold: 1, periodSeconds: 60, evaluationPeriods: 5, datapoints: 3 },
  /**
   * The functions without reserved concurrency (every route) running at more than 80 % of what
   * the account leaves them (its quota less what the stage reserves) in 3 of 5 minutes: throttles
   * are near, and the quota is to be raised before they start (README: Capacity).
   */
  unreservedConcurrency: { share: 0.8, periodSeconds: 60, evaluationPeriods: 5, datapoints: 3 },
} as const;

export interface MonitoringProps {
  stage: string;
  table: Table;
  apiStage: HttpStage;
  /** Every function of the stage, by handler: the background ones' concurrency is graphed. */
  functions: ReadonlyMap<string, ApiFunction>;
  /** Handlers whose function's concurrency and throttles are graphed one by one (the background ones). */
  concurrencyOf: readonly string[];
  /**
   * The account's concurrency less what this stage reserves: what the routes share (other stages'
   * reservations in the same account are not known here).
   */
  unreservedConcurrency: number;
  /** Alarms built elsewhere (dead-letter queues, iterator ages), shown in the alarm status widget. */
  otherAlarms: readonly Alarm[];
  /** The webhook delivery queue: its messages in flight and its oldest message. */
  webhookQueue: Queue;
}

export interface BuiltMonitoring {
  dashboard: Dashboard;
  alarms: {
    authorizationRate: Alarm;
    providerErrors: Alarm;
    serverErrorRate: Alarm;
    webhookDeadLetters: Alarm;
    webhookInFlight: Alarm;
    schedulerFailures: Alarm;
    dynamoDbThrottles: Alarm;
    lambdaThrottles: Alarm;
    unreservedConcurrency: Alarm;
  };
}

/**
 * A Metrics Insights query over the stage's `metric` of the dimension set [stage, `groupBy`], one
 * time series per value of `groupBy` (an alarm on it has one contributor per value).
 */
export function insightsQuery(
  stage: string,
  aggregate: "AVG" | "SUM",
  metric: string,
  groupBy: string,
): string {
  return (
    `SELECT ${aggregate}(${metric}) FROM SCHEMA("${METRICS_NAMESPACE}", ${groupBy}, stage) ` +
    `WHERE stage = '${stage}' GROUP BY ${groupBy}`
  );
}

/** A SEARCH expression over the stage's metrics of `metric` with exactly `dimensions` besides `stage`. */
export function searchOf(stage: string, metric: string, dimensions: readonly string[], statistic: string) {
  const schema = [METRICS_NAMESPACE, ...dimensions, "stage"].join(",");
  return `SEARCH('{${schema}} MetricName="${metric}" stage="${stage}"', '${statistic}')`;
}

export function buildMonitoring(stack: Stack, props: MonitoringProps): BuiltMonitoring {
  const { stage, table, apiStage } = props;
  const stageMetric = (metricName: string, statistic: string, periodSeconds = 60) =>
    new Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { stage },
      statistic,
      period: Duration.seconds(periodSeconds),
    });
  const search = (metric: string, dimensions: readonly string[], statistic: string, label: string) =>
    new SearchExpression({
      expression: searchOf(stage, metric, dimensions, statistic),
      label,
      period: Duration.minutes(1),
    });

  // ---- alarms ----
  const settings = ALARM_SETTINGS;
  const authorizationRate = new Alarm(stack, "AuthorizationRateAlarm", {
    alarmDescription:
      `A gateway configuration's authorization rate (approved over approved and declined) fell below ` +
      `${settings.authorizationRate.threshold * 100} % for ${(settings.authorizationRate.periodSeconds * settings.authorizationRate.evaluationPeriods) / 60} minutes: the contributors name the configurations.`,
    metric: new MathExpression({
      expression: insightsQuery(stage, "AVG", METRIC.approved, "gateway_configuration"),
      usingMetrics: {},
      period: Duration.seconds(settings.authorizationRate.periodSeconds),
      label: "Authorization rate by gateway configuration",
    }),
    threshold: settings.authorizationRate.threshold,
    comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
    evaluationPeriods: settings.authorizationRate.evaluationPeriods,
    datapointsToAlarm: settings.authorizationRate.datapoints,
    // No payment tried in a period is no rate at all, not a low one.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const providerErrors = new Alarm(stack, "ProviderErrorsAlarm", {
    alarmDescription: `More than ${settings.providerErrors.threshold * 100} % of a gateway configuration's provider calls failed (network, timeout, 5xx, unreadable answer) for ${(settings.providerErrors.periodSeconds * settings.providerErrors.evaluationPeriods) / 60} minutes: the contributors name the configurations.`,
    metric: new MathExpression({
      expression: insightsQuery(stage, "AVG", METRIC.providerErrors, "gateway_configuration"),
      usingMetrics: {},
      period: Duration.seconds(settings.providerErrors.periodSeconds),
      label: "Provider error rate by gateway configuration",
    }),
    threshold: settings.providerErrors.threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: settings.providerErrors.evaluationPeriods,
    datapointsToAlarm: settings.providerErrors.datapoints,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const errorRate = settings.serverErrorRate;
  const serverErrorRate = new Alarm(stack, "ServerErrorRateAlarm", {
    alarmDescription: `More than ${errorRate.threshold * 100} % of the API's answers were 5xx (API Gateway's count: throttled and timed-out functions included) in ${errorRate.datapoints} of ${errorRate.evaluationPeriods} minutes of at least ${errorRate.minimumRequests} requests. The dashboard's "5xx by route" says where.`,
    metric: new MathExpression({
      // A minute without a 5xx point is a minute of none; one without requests, a rate of 0.
      expression: `IF(FILL(requests, 0) >= ${errorRate.minimumRequests}, FILL(errors, 0) / FILL(requests, 1), 0)`,
      usingMetrics: {
        errors: apiStage.metricServerError({
          statistic: "Sum",
          period: Duration.seconds(errorRate.periodSeconds),
        }),
        requests: apiStage.metricCount({
          statistic: "Sum",
          period: Duration.seconds(errorRate.periodSeconds),
        }),
      },
      period: Duration.seconds(errorRate.periodSeconds),
      label: "5xx rate",
    }),
    threshold: errorRate.threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: errorRate.evaluationPeriods,
    datapointsToAlarm: errorRate.datapoints,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const webhookDeadLetters = new Alarm(stack, "WebhookDeadLettersMetricAlarm", {
    alarmDescription:
      "A webhook delivery was given up after its last attempt (WebhookDeadLetters): its message is in the delivery queue's dead-letter queue.",
    metric: stageMetric(METRIC.webhookDeadLetters, "Sum", settings.webhookDeadLetters.periodSeconds),
    threshold: settings.webhookDeadLetters.threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: settings.webhookDeadLetters.evaluationPeriods,
    datapointsToAlarm: settings.webhookDeadLetters.datapoints,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const inFlight = settings.webhookInFlight;
  const webhookInFlight = new Alarm(stack, "WebhookInFlightAlarm", {
    alarmDescription: `The webhook delivery queue holds ${inFlight.threshold} messages in flight (retries waiting out their delay among them): at about 120,000 it stops handing out messages, for every project.`,
    metric: props.webhookQueue.metricApproximateNumberOfMessagesNotVisible({
      statistic: "Maximum",
      period: Duration.seconds(inFlight.periodSeconds),
    }),
    threshold: inFlight.threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: inFlight.evaluationPeriods,
    datapointsToAlarm: inFlight.datapoints,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const schedulerFailures = new Alarm(stack, "SchedulerFailuresAlarm", {
    alarmDescription: `A kind of scheduled job (capture, renewal, …) failed in each of the last ${settings.schedulerFailures.evaluationPeriods} periods of ${settings.schedulerFailures.periodSeconds / 60} minutes: the contributors name the jobs.`,
    metric: new MathExpression({
      expression: insightsQuery(stage, "SUM", METRIC.schedulerFailures, "job"),
      usingMetrics: {},
      period: Duration.seconds(settings.schedulerFailures.periodSeconds),
      label: "Scheduler failures by job",
    }),
    threshold: settings.schedulerFailures.threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: settings.schedulerFailures.evaluationPeriods,
    datapointsToAlarm: settings.schedulerFailures.datapoints,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });

  const throttleEvents = tableThrottleEvents(table, settings.dynamoDbThrottles.periodSeconds);
  const dynamoDbThrottles = new Alarm(stack, "DynamoDbThrottlesAlarm", {
    alarmDescription: `The table or one of its indexes throttled requests in ${settings.dynamoDbThrottles.datapoints} of ${settings.dynamoDbThrottles.evaluationPeriods} minutes (read and write throttle events): a hot partition, or traffic past the table's warm throughput.`,
    metric: new MathExpression({
      expression: Object.keys(throttleEvents)
        .map((id) => `FILL(${id}, 0)`)
        .join(" + "),
      usingMetrics: throttleEvents,
      period: Duration.seconds(settings.dynamoDbThrottles.periodSeconds),
      label: "DynamoDB throttle events (table and indexes)",
    }),
    threshold: settings.dynamoDbThrottles.threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: settings.dynamoDbThrottles.evaluationPeriods,
    datapointsToAlarm: settings.dynamoDbThrottles.datapoints,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const lambdaThrottles = new Alarm(stack, "LambdaThrottlesAlarm", {
    alarmDescription: `Lambda throttled invocations in ${settings.lambdaThrottles.datapoints} of ${settings.lambdaThrottles.evaluationPeriods} minutes (the account's count: every stage and function of the account shares its concurrency). A throttled route answers 5xx; see the dashboard's concurrency graphs.`,
    metric: LambdaFunction.metricAllThrottles({
      statistic: "Sum",
      period: Duration.seconds(settings.lambdaThrottles.periodSeconds),
    }),
    threshold: settings.lambdaThrottles.threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: settings.lambdaThrottles.evaluationPeriods,
    datapointsToAlarm: settings.lambdaThrottles.datapoints,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const headroom = settings.unreservedConcurrency;
  const unreservedConcurrency = new Alarm(stack, "UnreservedConcurrencyAlarm", {
    alarmDescription: `The functions without reserved concurrency (the routes) ran more than ${headroom.share * 100} % of the ${props.unreservedConcurrency} concurrent executions the account leaves them, in ${headroom.datapoints} of ${headroom.evaluationPeriods} minutes: raise the account's concurrency quota before they are throttled.`,
    metric: LambdaFunction.metricAllUnreservedConcurrentExecutions({
      statistic: "Maximum",
      period: Duration.seconds(headroom.periodSeconds),
    }),
    threshold: Math.floor(headroom.share * props.unreservedConcurrency),
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: headroom.evaluationPeriods,
    datapointsToAlarm: headroom.datapoints,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const alarms = {
    authorizationRate,
    providerErrors,
    serverErrorRate,
    webhookDeadLetters,
    webhookInFlight,
    schedulerFailures,
    dynamoDbThrottles,
    lambdaThrottles,
    unreservedConcurrency,
  };

  // ---- dashboard ----
  const dashboard = new Dashboard(stack, "Dashboard", {
    // Physical names are CloudFormation's (two stages never collide); the stage shows in the body.
    defaultInterval: Duration.hours(3),
    periodOverride: PeriodOverride.AUTO,
  });
  const graph = (title: string, left: IMetric[], options: { right?: IMetric[]; width?: number } = {}) =>
    new GraphWidget({
      title,
      left,
      ...(options.right ? { right: options.right } : {}),
      width: options.width ?? 8,
      height: 6,
    });
  const backgroundConcurrency = props.concurrencyOf.map((handler) => {
    const fn = props.functions.get(handler);
    if (!fn) throw new Error(`No function for ${handler} to graph`);
    return { handler, fn };
  });

  dashboard.addWidgets(
    new TextWidget({
      markdown: `# Payment API, stage \`${stage}\`\nBusiness figures from the functions (namespace \`${METRICS_NAMESPACE}\`, dimension \`stage=${stage}\`), then DynamoDB and Lambda throttles. Rates are averages of 0/1 figures.`,
      width: 24,
      height: 2,
    }),
  );
  dashboard.addWidgets(
    new AlarmStatusWidget({
      title: "Alarms",
      alarms: [...Object.values(alarms), ...props.otherAlarms],
      width: 24,
      height: 3,
    }),
  );
  dashboard.addWidgets(
    graph("Requests by route", [search(METRIC.requests, ["route"], "Sum", "")]),
    graph("5xx by route", [search(METRIC.serverErrors, ["route"], "Sum", "")]),
    graph("4xx by route", [search(METRIC.clientErrors, ["route"], "Sum", "")]),
  );
  dashboard.addWidgets(
    graph("Handler latency p99 by route (ms)", [search(METRIC.latency, ["route"], "p99", "")]),
    graph(
      "API Gateway: requests, 4xx, 5xx (what clients saw)",
      [apiStage.metricCount({ statistic: "Sum", period: Duration.minutes(1), label: "requests" })],
      {
        right: [
          apiStage.metricClientError({ statistic: "Sum", period: Duration.minutes(1), label: "4xx" }),
          apiStage.metricServerError({ statistic: "Sum", period: Duration.minutes(1), label: "5xx" }),
        ],
      },
    ),
    graph("Requests, 5xx and 4xx (all routes)", [stageMetric(METRIC.requests, "Sum")], {
      right: [stageMetric(METRIC.serverErrors, "Sum"), stageMetric(METRIC.clientErrors, "Sum")],
    }),
  );
  dashboard.addWidgets(
    graph("Payments by configuration and outcome", [
      search(METRIC.payments, ["gateway_configuration", "outcome"], "Sum", ""),
    ]),
    graph("Authorization rate by configuration", [
      search(METRIC.approved, ["gateway_configuration"], "Average", ""),
    ]),
    graph("Provider errors by configuration", [
      search(METRIC.providerErrors, ["gateway_configuration"], "Sum", ""),
    ]),
  );
  dashboard.addWidgets(
    graph(
      "Provider latency p50 / p99 by configuration (ms)",
      [
        search(METRIC.providerLatency, ["gateway_configuration"], "p50", "p50"),
        search(METRIC.providerLatency, ["gateway_configuration"], "p99", "p99"),
      ],
      { width: 12 },
    ),
    graph(
      "Payments, approvals (all configurations)",
      [stageMetric(METRIC.payments, "Sum"), stageMetric(METRIC.approved, "Sum")],
      {
        width: 12,
      },
    ),
  );
  dashboard.addWidgets(
    graph("Webhooks: deliveries, failures, dead letters", [
      stageMetric(METRIC.webhookDeliveries, "Sum"),
      stageMetric(METRIC.webhookFailures, "Sum"),
      stageMetric(METRIC.webhookDeadLetters, "Sum"),
    ]),
    graph("Webhook lag p50 / p99 (ms, created → 2xx)", [
      stageMetric(METRIC.webhookLag, "p50"),
      stageMetric(METRIC.webhookLag, "p99"),
    ]),
    graph("Recovery settlements by outcome", [search(METRIC.recoverySettlements, ["outcome"], "Sum", "")]),
  );
  dashboard.addWidgets(
    graph(
      "Webhook queue: messages waiting, in flight; oldest (s)",
      [
        props.webhookQueue.metricApproximateNumberOfMessagesVisible({
          statistic: "Maximum",
          period: Duration.minutes(1),
          label: "waiting",
        }),
        props.webhookQueue.metricApproximateNumberOfMessagesNotVisible({
          statistic: "Maximum",
          period: Duration.minutes(1),
          label: "in flight",
        }),
      ],
      {
        right: [
          props.webhookQueue.metricApproximateAgeOfOldestMessage({
            statistic: "Maximum",
            period: Duration.minutes(1),
            label: "oldest",
          }),
        ],
        width: 24,
      },
    ),
  );
  dashboard.addWidgets(
    graph(
      "Scheduler lag p50 / p99 by job (ms, due → start)",
      [
        search(METRIC.schedulerLag, ["job"], "p50", "p50"),
        search(METRIC.schedulerLag, ["job"], "p99", "p99"),
      ],
      { width: 12 },
    ),
    graph("Scheduler failures by job", [search(METRIC.schedulerFailures, ["job"], "Sum", "")], {
      width: 12,
    }),
  );
  dashboard.addWidgets(
    graph(
      "DynamoDB throttled requests by operation",
      [
        new SearchExpression({
          expression: `SEARCH('{AWS/DynamoDB,Operation,TableName} MetricName="ThrottledRequests" TableName="${table.tableName}"', 'Sum')`,
          label: "",
          period: Duration.minutes(1),
        }),
      ],
      { width: 12 },
    ),
    graph("DynamoDB read / write throttle events (table and indexes)", Object.values(throttleEvents), {
      width: 12,
    }),
  );
  dashboard.addWidgets(
    graph(
      "Lambda (account): concurrent executions, throttles",
      [
        LambdaFunction.metricAllConcurrentExecutions({ statistic: "Maximum", period: Duration.minutes(1) }),
        LambdaFunction.metricAllUnreservedConcurrentExecutions({
          statistic: "Maximum",
          period: Duration.minutes(1),
        }),
      ],
      {
        right: [LambdaFunction.metricAllThrottles({ statistic: "Sum", period: Duration.minutes(1) })],
        width: 12,
      },
    ),
    graph(
      "Background functions: concurrent executions, throttles",
      backgroundConcurrency.map(({ handler, fn }) =>
        fn.metric("ConcurrentExecutions", {
          statistic: "Maximum",
          period: Duration.minutes(1),
          label: handler,
        }),
      ),
      {
        right: backgroundConcurrency.map(({ handler, fn }) =>
          fn.metricThrottles({
            statistic: "Sum",
            period: Duration.minutes(1),
            label: `${handler} throttles`,
          }),
        ),
        width: 12,
      },
    ),
  );
  return { dashboard, alarms };
}

/**
 * Read and write throttle events of the table and of each of its global secondary indexes, by
 * math expression id (`tableRead`, `tableWrite`, `gsi1Read`, …). An alarm's math expression may use
 * at most 10 metrics: the table and four indexes.
 */
function tableThrottleEvents(table: Table, periodSeconds: number): Record<string, IMetric> {
  const metrics: Record<string, IMetric> = {};
  const period = Duration.seconds(periodSeconds);
  for (const kind of ["Read", "Write"] as const) {
    metrics[`table${kind}`] = new Metric({
      namespace: "AWS/DynamoDB",
      metricName: `${kind}ThrottleEvents`,
      dimensionsMap: { TableName: table.tableName },
      statistic: "Sum",
      period,
      label: `table ${kind.toLowerCase()}`,
    });
  }
  for (const index of Object.values(TABLE.indexes)) {
    for (const kind of ["Read", "Write"] as const) {
      metrics[`${index.name}${kind}`] = new Metric({
        namespace: "AWS/DynamoDB",
        metricName: `${kind}ThrottleEvents`,
        dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: index.name },
        statistic: "Sum",
        period,
        label: `${index.name} ${kind.toLowerCase()}`,
      });
    }
  }
  if (Object.keys(metrics).length > 10) {
    throw new Error("A math expression alarm may use at most 10 metrics: split the DynamoDB throttle alarm");
  }
  return metrics;
}
