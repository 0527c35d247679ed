import { App } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CAPACITY,
  capacityProfileOf,
  MIX,
  PEAK_REQUESTS_PER_SECOND,
  WEBHOOK_BATCH_SECONDS,
} from "../../lib/capacity.ts";
import { PaymentStack } from "../../lib/payment-stack.ts";
import { queueWorkers } from "../../lib/topology.ts";
import { TABLE } from "../../shared/db/table.ts";
import {
  type CfnResource,
  functionLogicalId,
  referencedId,
  resourcesOf,
  SKIP_BUNDLING,
  wholeTemplate,
} from "./templates.ts";

/** Lambda keeps this much of an account's concurrency unreserved, whatever functions reserve. */
const UNRESERVED_MINIMUM = 100;
/** An account's concurrent executions, by default (README: Capacity). */
const DEFAULT_ACCOUNT_CONCURRENCY = 1_000;
/** API Gateway's throttle quota per account and Region, and its burst bucket. */
const API_GATEWAY_ACCOUNT_RATE = 10_000;
const API_GATEWAY_ACCOUNT_BURST = 5_000;
/** DynamoDB's default table-level throughput quota of an on-demand table, per second. */
const TABLE_LEVEL_QUOTA = 40_000;

describe("capacity: what a stage is sized for", () => {
  let prodTemplate: Template;
  let devTemplate: Template;

  beforeAll(() => {
    const app = new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false });
    const prod = new PaymentStack(app, "PaymentApi-prod", { stage: "prod" });
    const dev = new PaymentStack(app, "PaymentApi-dev", { stage: "dev" });
    app.synth();
    prodTemplate = wholeTemplate(prod);
    devTemplate = wholeTemplate(dev);
    expect(prod.capacityProfile).toBe("peak");
    expect(dev.capacityProfile).toBe("sandbox");
  }, 90_000);

  const reservations = (template: Template) =>
    Object.fromEntries(
      Object.entries(resourcesOf(template, "AWS::Lambda::Function")).flatMap(([id, fn]) =>
        fn.Properties.ReservedConcurrentExecutions === undefined
          ? []
          : [[id, fn.Properties.ReservedConcurrentExecutions]],
      ),
    );
  const mappingOf = (template: Template, handler: string) => {
    const fnId = functionLogicalId(template, handler);
    const [mapping] = Object.values(resourcesOf(template, "AWS::Lambda::EventSourceMapping")).filter(
      (candidate) => referencedId(candidate.Properties.FunctionName) === fnId,
    );
    return mapping as CfnResource;
  };
  const tableOf = (template: Template) =>
    Object.values(resourcesOf(template, "AWS::DynamoDB::Table"))[0] as CfnResource;
  const indexOf = (template: Template, name: string) =>
    (
      tableOf(template).Properties.GlobalSecondaryIndexes as { IndexName: string; WarmThroughput?: unknown }[]
    ).find((index) => index.IndexName === name);

  describe("prod, sized for one project's peak", () => {
    it("throttles the API stage at 6,000 requests per second with a burst of 5,000", () => {
      prodTemplate.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
        DefaultRouteSettings: { ThrottlingRateLimit: 6_000, ThrottlingBurstLimit: 5_000 },
      });
    });

    it("reserves (and caps) the concurrency of the background work, and of no route", () => {
      expect(reservations(prodTemplate)).toEqual({
        [functionLogicalId(prodTemplate, "webhooks/deliver")]: 200,
        [functionLogicalId(prodTemplate, "exports/run")]: 2,
        [functionLogicalId(prodTemplate, "exports/deliver")]: 4,
        [functionLogicalId(prodTemplate, "jobs/capture-invoice")]: 100,
        [functionLogicalId(prodTemplate, "jobs/subscription")]: 100,
        [functionLogicalId(prodTemplate, "jobs/daily-close")]: 10,
        [functionLogicalId(prodTemplate, "jobs/recover-reservations")]: 2,
      });
    });

    it("lets the webhook worker's event source run 200 batches at once", () => {
      expect(mappingOf(prodTemplate, "webhooks/deliver").Properties).toMatchObject({
        BatchSize: 10,
        ScalingConfig: { MaximumConcurrency: 200 },
      });
      // The other workers keep their declared concurrency.
      for (const worker of queueWorkers.filter((candidate) => candidate.handler !== "webhooks/deliver")) {
        expect(mappingOf(prodTemplate, worker.handler).Properties.ScalingConfig, worker.handler).toEqual({
          MaximumConcurrency: worker.maxConcurrency,
        });
      }
    });

    it("alarms when the routes run 80 % of what the raised quota of 5,000 leaves them after the 418 reserved", () => {
      const alarms = Object.entries(resourcesOf(prodTemplate, "AWS::CloudWatch::Alarm")).filter(([id]) =>
        id.startsWith("UnreservedConcurrencyAlarm"),
      );
      expect(alarms).toHaveLength(1);
      expect((alarms[0] as [string, CfnResource])[1].Properties.Threshold).toBe(3_665);
    });

    it("pre-warms the table for 24,000 reads and 40,000 writes a second, and gsi1 for 25,000 writes", () => {
      expect(tableOf(prodTemplate).Properties.WarmThroughput).toEqual({
        ReadUnitsPerSecond: 24_000,
        WriteUnitsPerSecond: 40_000,
      });
      expect(indexOf(prodTemplate, "gsi1")?.WarmThroughput).toEqual({ WriteUnitsPerSecond: 25_000 });
      for (const index of Object.values(TABLE.indexes).filter((candidate) => candidate.name !== "gsi1")) {
        expect(indexOf(prodTemplate, index.name)?.WarmThroughput, index.name).toBeUndefined();
      }
    });
  });

  describe("a sandbox stage", () => {
    it("reserves nothing, pre-warms nothing, and keeps the small throttle and the declared worker concurrency", () => {
      expect(reservations(devTemplate)).toEqual({});
      expect(tableOf(devTemplate).Properties.WarmThroughput).toBeUndefined();
      for (const index of Object.values(TABLE.indexes)) {
        expect(indexOf(devTemplate, index.name)?.WarmThroughput, index.name).toBeUndefined();
      }
      devTemplate.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
        DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
      });
      for (const worker of queueWorkers) {
        expect(mappingOf(devTemplate, worker.handler).Properties.ScalingConfig, worker.handler).toEqual({
          MaximumConcurrency: worker.maxConcurrency,
        });
      }
    });
  });

  describe("the profile", () => {
    it("is peak for prod, sandbox for any other stage, and the context's when it names one", () => {
      expect(capacityProfileOf("prod", undefined)).toBe("peak");
      expect(capacityProfileOf("staging", undefined)).toBe("sandbox");
      expect(capacityProfileOf("staging", "peak")).toBe("peak");
      expect(capacityProfileOf("prod", "sandbox")).toBe("sandbox");
      expect(() => capacityProfileOf("dev", "huge")).toThrow(/capacity must be "peak" or "sandbox"/);
    });
  });

  describe("the arithmetic behind the peak profile (README: Capacity at 5,000 requests per second)", () => {
    const peak = CAPACITY.peak;

    it("deploys into an account of default quota: what it reserves leaves Lambda's unreserved minimum", () => {
      const reserved = Object.values(peak.reservedConcurrency).reduce((sum, value) => sum + value, 0);
      expect(reserved).toBe(418);
      expect(reserved + UNRESERVED_MINIMUM).toBeLessThanOrEqual(DEFAULT_ACCOUNT_CONCURRENCY);
    });

    it("reserves for every queue worker at least the batches its event source may run at once", () => {
      for (const worker of queueWorkers) {
        const maxConcurrency = peak.maxConcurrency[worker.handler] ?? worker.maxConcurrency;
        expect(peak.reservedConcurrency[worker.handler], worker.handler).toBeGreaterThanOrEqual(
          maxConcurrency,
        );
        // Lambda's bounds for an SQS event source's maximum concurrency.
        expect(maxConcurrency).toBeGreaterThanOrEqual(2);
        expect(maxConcurrency).toBeLessThanOrEqual(1_000);
      }
    });

    it("delivers the webhooks of 5,000 requests a second as fast as they are made", () => {
      const deliver = queueWorkers.find((worker) => worker.handler === "webhooks/deliver");
      const perSecond =
        ((peak.maxConcurrency["webhooks/deliver"] ?? 0) * (deliver?.batchSize ?? 0)) / WEBHOOK_BATCH_SECONDS;
      const needed = PEAK_REQUESTS_PER_SECOND * MIX.eventsPerRequest;
      expect(Math.round(needed)).toBe(3_086);
      expect(perSecond).toBeGreaterThanOrEqual(needed);
    });

    it("admits the peak at the stage within API Gateway's account quota and bucket", () => {
      expect(peak.api.rateLimit).toBeGreaterThanOrEqual(PEAK_REQUESTS_PER_SECOND);
      expect(peak.api.rateLimit).toBeLessThanOrEqual(API_GATEWAY_ACCOUNT_RATE);
      expect(peak.api.burstLimit).toBeLessThanOrEqual(API_GATEWAY_ACCOUNT_BURST);
    });

    it("pre-warms gsi1 for its writes at the peak, and the table up to its default quota (the rest needs a support request)", () => {
      expect(peak.warmThroughput.indexes?.gsi1?.writeUnitsPerSecond).toBeGreaterThanOrEqual(
        PEAK_REQUESTS_PER_SECOND * MIX.gsi1WriteUnitsPerRequest,
      );
      const tableWrites = peak.warmThroughput.table?.writeUnitsPerSecond ?? 0;
      expect(tableWrites).toBe(TABLE_LEVEL_QUOTA);
      // What 5,000 req/s of the mix write: more than the default quota.
      expect(PEAK_REQUESTS_PER_SECOND * MIX.tableWriteUnitsPerRequest).toBe(88_000);
    });
  });
});
