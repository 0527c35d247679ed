import { App, type CfnElement } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { ALARM_SETTINGS } from "../../lib/monitoring.ts";
import { PaymentStack } from "../../lib/payment-stack.ts";
import { TABLE } from "../../shared/db/table.ts";
import { type CfnResource, resourcesOf, SKIP_BUNDLING, wholeTemplate } from "./templates.ts";

interface MetricQuery {
  Id: string;
  Expression?: string;
  Period?: number;
  ReturnData?: boolean;
  MetricStat?: {
    Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] };
    Period: number;
    Stat: string;
  };
}
interface Widget {
  type: string;
  properties: {
    title?: string;
    markdown?: string;
    alarms?: string[];
    metrics?: unknown[][];
    right?: unknown;
  };
}

/** A CloudFormation value as text: `{ Ref: X }` is `<X>`, `{ Fn::GetAtt: [X, Y] }` `<X.Y>`, a join joined. */
function rendered(value: unknown): string {
  if (typeof value === "string") return value;
  const node = value as { Ref?: string; "Fn::GetAtt"?: [string, string]; "Fn::Join"?: [string, unknown[]] };
  if (node.Ref) return `<${node.Ref}>`;
  if (node["Fn::GetAtt"]) return `<${node["Fn::GetAtt"].join(".")}>`;
  if (node["Fn::Join"]) return node["Fn::Join"][1].map(rendered).join(node["Fn::Join"][0]);
  throw new Error(`Cannot render ${JSON.stringify(value)}`);
}

describe("monitoring: the stage's dashboard and alarms", () => {
  let stack: PaymentStack;
  let template: Template;
  let alarms: Record<string, CfnResource>;
  let topicId: string;
  let tableId: string;
  let widgets: Widget[];

  beforeAll(() => {
    const app = new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false });
    stack = new PaymentStack(app, "PaymentApi-dev", { stage: "dev" });
    app.synth();
    template = wholeTemplate(stack);
    alarms = resourcesOf(template, "AWS::CloudWatch::Alarm");
    [topicId = ""] = Object.keys(resourcesOf(template, "AWS::SNS::Topic"));
    [tableId = ""] = Object.keys(resourcesOf(template, "AWS::DynamoDB::Table"));
    const dashboards = Object.values(resourcesOf(template, "AWS::CloudWatch::Dashboard"));
    expect(dashboards).toHaveLength(1);
    widgets = (
      JSON.parse(rendered((dashboards[0] as CfnResource).Properties.DashboardBody)) as { widgets: Widget[] }
    ).widgets;
  }, 60_000);

  const alarmNamed = (prefix: string): CfnResource => {
    const found = Object.entries(alarms).filter(([id]) => new RegExp(`^${prefix}[0-9A-F]{8}$`).test(id));
    expect(found, prefix).toHaveLength(1);
    return (found[0] as [string, CfnResource])[1];
  };
  const queriesOf = (alarm: CfnResource) => alarm.Properties.Metrics as MetricQuery[];
  const returned = (alarm: CfnResource) => {
    const returning = queriesOf(alarm).filter((query) => query.ReturnData !== false);
    expect(returning).toHaveLength(1);
    return returning[0] as MetricQuery;
  };
  const expectSettings = (
    alarm: CfnResource,
    settings: { threshold: number; evaluationPeriods: number; datapoints: number },
  ) =>
    expect(alarm.Properties).toMatchObject({
      Threshold: settings.threshold,
      EvaluationPeriods: settings.evaluationPeriods,
      DatapointsToAlarm: settings.datapoints,
      TreatMissingData: "notBreaching",
      AlarmActions: [{ Ref: topicId }],
      OKActions: [{ Ref: topicId }],
    });
  const widgetTitled = (title: string): Widget => {
    const found = widgets.filter((widget) => widget.properties.title === title);
    expect(found, title).toHaveLength(1);
    return found[0] as Widget;
  };
  /** The expressions a graph widget draws (SEARCH and math), in order. */
  const expressionsOf = (title: string) =>
    (widgetTitled(title).properties.metrics ?? []).flatMap((line) =>
      line.flatMap((part) =>
        part && typeof part === "object" && "expression" in part
          ? [(part as { expression: string }).expression]
          : [],
      ),
    );
  /** The plain metrics a graph widget draws, as `namespace metric [dimension=value …] stat`. */
  const metricsOf = (title: string) =>
    (widgetTitled(title).properties.metrics ?? []).flatMap((line) => {
      if (line.some((part) => part && typeof part === "object" && "expression" in part)) return [];
      const options = line.at(-1) as { stat?: string } | string;
      const names = line.filter((part): part is string => typeof part === "string");
      return [`${names.join(" ")} ${typeof options === "object" ? options.stat : ""}`.trim()];
    });

  describe("alarms", () => {
    it("alarms per gateway configuration on its authorization rate: a Metrics Insights query grouped by configuration over the stage's Approved", () => {
      const alarm = alarmNamed("AuthorizationRateAlarm");
      expect(returned(alarm)).toEqual({
        Id: expect.any(String),
        Expression:
          "SELECT AVG(Approved) FROM SCHEMA(\"PaymentApi\", gateway_configuration, stage) WHERE stage = 'dev' GROUP BY gateway_configuration",
        Period: 300,
        Label: expect.any(String),
        ReturnData: true,
      });
      expect(queriesOf(alarm)).toHaveLength(1);
      expect(alarm.Properties.ComparisonOperator).toBe("LessThanThreshold");
      expectSettings(alarm, ALARM_SETTINGS.authorizationRate);
      expect(alarm.Properties.Threshold).toBe(0.6);
    });

    it("alarms per gateway configuration on its provider error rate", () => {
      const alarm = alarmNamed("ProviderErrorsAlarm");
      expect(returned(alarm).Expression).toBe(
        "SELECT AVG(ProviderErrors) FROM SCHEMA(\"PaymentApi\", gateway_configuration, stage) WHERE stage = 'dev' GROUP BY gateway_configuration",
      );
      expect(returned(alarm).Period).toBe(300);
      expect(alarm.Properties.ComparisonOperator).toBe("GreaterThanThreshold");
      expectSettings(alarm, ALARM_SETTINGS.providerErrors);
    });

    it("alarms on the share of 5xx answers API Gateway counted on the stage, in minutes with enough requests", () => {
      const alarm = alarmNamed("ServerErrorRateAlarm");
      expect(returned(alarm).Expression).toBe(
        "IF(FILL(requests, 0) >= 20, FILL(errors, 0) / FILL(requests, 1), 0)",
      );
      const apiId = Object.keys(resourcesOf(template, "AWS::ApiGatewayV2::Api"))[0];
      const inputs = Object.fromEntries(
        queriesOf(alarm)
          .filter((query) => query.MetricStat)
          .map((query) => [query.Id, query.MetricStat]),
      );
      for (const [id, metricName] of [
        ["errors", "5xx"],
        ["requests", "Count"],
      ]) {
        expect(inputs[id as string], id).toEqual({
          Metric: {
            Namespace: "AWS/ApiGateway",
            MetricName: metricName,
            Dimensions: [
              { Name: "ApiId", Value: { Ref: apiId } },
              { Name: "Stage", Value: "$default" },
            ],
          },
          Period: 60,
          Stat: "Sum",
        });
      }
      expect(alarm.Properties.ComparisonOperator).toBe("GreaterThanThreshold");
      expectSettings(alarm, ALARM_SETTINGS.serverErrorRate);
    });

    it("alarms as soon as the functions report a webhook delivery given up", () => {
      const alarm = alarmNamed("WebhookDeadLettersMetricAlarm");
      expect(alarm.Properties).toMatchObject({
        Namespace: "PaymentApi",
        MetricName: "WebhookDeadLetters",
        Dimensions: [{ Name: "stage", Value: "dev" }],
        Statistic: "Sum",
        Period: 60,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
      });
      expectSettings(alarm, ALARM_SETTINGS.webhookDeadLetters);
    });

    it("alarms when the webhook queue holds half of SQS's ~120,000 messages in flight", () => {
      const alarm = alarmNamed("WebhookInFlightAlarm");
      const queueId = stack.getLogicalId(
        stack.background.queues.webhookDeliveries.queue.node.defaultChild as CfnElement,
      );
      expect(alarm.Properties).toMatchObject({
        Namespace: "AWS/SQS",
        MetricName: "ApproximateNumberOfMessagesNotVisible",
        Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [queueId, "QueueName"] } }],
        Statistic: "Maximum",
        Period: 60,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
      });
      expectSettings(alarm, ALARM_SETTINGS.webhookInFlight);
      expect(alarm.Properties.Threshold).toBe(60_000);
      const queueName = `<${queueId}.QueueName>`;
      expect(metricsOf("Webhook queue: messages waiting, in flight; oldest (s)")).toEqual([
        `AWS/SQS ApproximateNumberOfMessagesVisible QueueName ${queueName} Maximum`,
        `AWS/SQS ApproximateNumberOfMessagesNotVisible QueueName ${queueName} Maximum`,
        `AWS/SQS ApproximateAgeOfOldestMessage QueueName ${queueName} Maximum`,
      ]);
    });

    it("alarms per kind of scheduled job failing period after period", () => {
      const alarm = alarmNamed("SchedulerFailuresAlarm");
      expect(returned(alarm).Expression).toBe(
        "SELECT SUM(SchedulerFailures) FROM SCHEMA(\"PaymentApi\", job, stage) WHERE stage = 'dev' GROUP BY job",
      );
      expect(alarm.Properties.ComparisonOperator).toBe("GreaterThanOrEqualToThreshold");
      expectSettings(alarm, ALARM_SETTINGS.schedulerFailures);
    });

    it("alarms on read and write throttle events of the table and of every index", () => {
      const alarm = alarmNamed("DynamoDbThrottlesAlarm");
      const inputs = queriesOf(alarm).filter((query) => query.MetricStat);
      const watched = inputs.map((query) => {
        const { Metric, Stat } = query.MetricStat as NonNullable<MetricQuery["MetricStat"]>;
        expect(Metric.Namespace).toBe("AWS/DynamoDB");
        expect(Stat).toBe("Sum");
        const dimensions = Object.fromEntries(Metric.Dimensions.map((d) => [d.Name, d.Value]));
        expect(dimensions.TableName).toEqual({ Ref: tableId });
        return `${dimensions.GlobalSecondaryIndexName ?? "table"} ${Metric.MetricName}`;
      });
      const indexes = Object.values(TABLE.indexes).map((index) => index.name);
      expect(watched.sort()).toEqual(
        ["table", ...indexes]
          .flatMap((where) => [`${where} ReadThrottleEvents`, `${where} WriteThrottleEvents`])
          .sort(),
      );
      // Every input counts: the expression adds them all, a missing point as 0.
      const expression = returned(alarm).Expression ?? "";
      for (const input of inputs) expect(expression).toContain(`FILL(${input.Id}, 0)`);
      expect(expression.split("+")).toHaveLength(inputs.length);
      expect(alarm.Properties.ComparisonOperator).toBe("GreaterThanOrEqualToThreshold");
      expectSettings(alarm, ALARM_SETTINGS.dynamoDbThrottles);
    });

    it("alarms on Lambda's throttles of the account", () => {
      const alarm = alarmNamed("LambdaThrottlesAlarm");
      expect(alarm.Properties).toMatchObject({
        Namespace: "AWS/Lambda",
        MetricName: "Throttles",
        Statistic: "Sum",
        Period: 60,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
      });
      expect(alarm.Properties.Dimensions).toBeUndefined();
      expectSettings(alarm, ALARM_SETTINGS.lambdaThrottles);
    });

    it("alarms when the routes' share of the account's concurrency nears its end: 80 % of a default account's 1,000", () => {
      const alarm = alarmNamed("UnreservedConcurrencyAlarm");
      expect(alarm.Properties).toMatchObject({
        Namespace: "AWS/Lambda",
        MetricName: "UnreservedConcurrentExecutions",
        Statistic: "Maximum",
        Period: 60,
        ComparisonOperator: "GreaterThanOrEqualToThreshold",
      });
      expect(alarm.Properties.Dimensions).toBeUndefined();
      // A sandbox stage reserves nothing: 80 % of the whole default quota.
      expectSettings(alarm, { ...ALARM_SETTINGS.unreservedConcurrency, threshold: 800 });
    });

    it("gives every threshold a reason and a duration: no alarm fires on a single point unless meant to", () => {
      for (const [name, settings] of Object.entries(ALARM_SETTINGS)) {
        expect(settings.datapoints, name).toBeLessThanOrEqual(settings.evaluationPeriods);
        if (name !== "webhookDeadLetters") expect(settings.datapoints, name).toBeGreaterThan(1);
      }
    });
  });

  describe("dashboard", () => {
    it("names the stage and shows every alarm of the stage", () => {
      const [header] = widgets;
      expect(header?.properties.markdown).toContain("stage `dev`");
      const statuses = widgets.filter((widget) => widget.type === "alarm");
      expect(statuses).toHaveLength(1);
      expect(new Set(statuses[0]?.properties.alarms)).toEqual(
        new Set(Object.keys(alarms).map((id) => `<${id}.Arn>`)),
      );
    });

    it("graphs requests, 5xx, 4xx and latency by route from the functions' figures of this stage", () => {
      const byRoute = (metric: string, stat: string) =>
        `SEARCH('{PaymentApi,route,stage} MetricName="${metric}" stage="dev"', '${stat}')`;
      expect(expressionsOf("Requests by route")).toEqual([byRoute("Requests", "Sum")]);
      expect(expressionsOf("5xx by route")).toEqual([byRoute("ServerErrors", "Sum")]);
      expect(expressionsOf("4xx by route")).toEqual([byRoute("ClientErrors", "Sum")]);
      expect(expressionsOf("Handler latency p99 by route (ms)")).toEqual([byRoute("Latency", "p99")]);
      expect(metricsOf("Requests, 5xx and 4xx (all routes)")).toEqual([
        "PaymentApi Requests stage dev Sum",
        "PaymentApi ServerErrors stage dev Sum",
        "PaymentApi ClientErrors stage dev Sum",
      ]);
    });

    it("graphs payments by configuration and outcome, the authorization rate, provider latency and errors by configuration", () => {
      const search = (metric: string, dimensions: string, stat: string) =>
        `SEARCH('{PaymentApi,${dimensions},stage} MetricName="${metric}" stage="dev"', '${stat}')`;
      expect(expressionsOf("Payments by configuration and outcome")).toEqual([
        search("Payments", "gateway_configuration,outcome", "Sum"),
      ]);
      expect(expressionsOf("Authorization rate by configuration")).toEqual([
        search("Approved", "gateway_configuration", "Average"),
      ]);
      expect(expressionsOf("Provider latency p50 / p99 by configuration (ms)")).toEqual([
        search("ProviderLatency", "gateway_configuration", "p50"),
        search("ProviderLatency", "gateway_configuration", "p99"),
      ]);
      expect(expressionsOf("Provider errors by configuration")).toEqual([
        search("ProviderErrors", "gateway_configuration", "Sum"),
      ]);
    });

    it("graphs webhook deliveries, failures, dead letters and lag, scheduler lag and failures per job, and recovery settlements", () => {
      expect(metricsOf("Webhooks: deliveries, failures, dead letters")).toEqual([
        "PaymentApi WebhookDeliveries stage dev Sum",
        "PaymentApi WebhookFailures stage dev Sum",
        "PaymentApi WebhookDeadLetters stage dev Sum",
      ]);
      expect(metricsOf("Webhook lag p50 / p99 (ms, created → 2xx)")).toEqual([
        "PaymentApi WebhookLag stage dev p50",
        "PaymentApi WebhookLag stage dev p99",
      ]);
      const perJob = (metric: string, stat: string) =>
        `SEARCH('{PaymentApi,job,stage} MetricName="${metric}" stage="dev"', '${stat}')`;
      expect(expressionsOf("Scheduler lag p50 / p99 by job (ms, due → start)")).toEqual([
        perJob("SchedulerLag", "p50"),
        perJob("SchedulerLag", "p99"),
      ]);
      expect(expressionsOf("Scheduler failures by job")).toEqual([perJob("SchedulerFailures", "Sum")]);
      expect(expressionsOf("Recovery settlements by outcome")).toEqual([
        `SEARCH('{PaymentApi,outcome,stage} MetricName="RecoverySettlements" stage="dev"', 'Sum')`,
      ]);
    });

    it("graphs DynamoDB throttles of the stage's table (by operation, and per index) and Lambda's concurrency and throttles", () => {
      expect(expressionsOf("DynamoDB throttled requests by operation")).toEqual([
        `SEARCH('{AWS/DynamoDB,Operation,TableName} MetricName="ThrottledRequests" TableName="<${tableId}>"', 'Sum')`,
      ]);
      const table = `TableName <${tableId}>`;
      expect(metricsOf("DynamoDB read / write throttle events (table and indexes)")).toEqual([
        `AWS/DynamoDB ReadThrottleEvents ${table} Sum`,
        `AWS/DynamoDB WriteThrottleEvents ${table} Sum`,
        ...Object.values(TABLE.indexes).flatMap((index) =>
          ["Read", "Write"].map(
            (kind) =>
              `AWS/DynamoDB ${kind}ThrottleEvents GlobalSecondaryIndexName ${index.name} ${table} Sum`,
          ),
        ),
      ]);
      expect(metricsOf("Lambda (account): concurrent executions, throttles")).toEqual([
        "AWS/Lambda ConcurrentExecutions Maximum",
        "AWS/Lambda UnreservedConcurrentExecutions Maximum",
        "AWS/Lambda Throttles Sum",
      ]);
    });
  });
});
