import { App, type CfnElement, NestedStack, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { PaymentStack } from "../../lib/payment-stack.ts";
import { groupRoutes, MAX_ROUTES_PER_STACK } from "../../lib/route-stacks.ts";
import {
  type RouteDeclaration,
  routeKey,
  routes,
  scheduledJobs,
  type Topology,
  topology,
} from "../../lib/topology.ts";
import {
  actionsOf,
  alias,
  type CfnResource,
  environmentOf,
  referencedId,
  resourcesOf,
  SKIP_BUNDLING,
  stacksOf,
  statementsOf,
} from "./templates.ts";

/** Well under CloudFormation's 500: what a stack may hold here, so that it can still grow. */
const STACK_BUDGET = 400;
/** API Gateway's default quota of routes per HTTP API: no stack layout serves more routes than this. */
const API_GATEWAY_ROUTE_QUOTA = 300;

/** CloudFormation's limit on a template given by URL (nested stacks, and `cdk deploy` of a large root). */
const TEMPLATE_BYTES_LIMIT = 1_000_000;

/**
 * Today's routes and as many again: each a new route (`/v2/…`) on the same handler file under
 * another name (`v2/../customers/create`), so its own function in a new group (`v2`), which is
 * larger than one stack holds.
 */
const twiceTheRoutes: Topology = {
  ...topology,
  routes: [
    ...routes,
    ...routes.map((route) => ({ ...route, path: `/v2${route.path}`, handler: alias("v2", route.handler) })),
  ],
};

interface Synthesized {
  stack: PaymentStack;
  /** Each stack's own template (parameters unresolved), by stack. */
  templates: Map<Stack, Template>;
}

function synthesize(stage: string, of: Topology): Synthesized {
  const app = new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false });
  const stack = new PaymentStack(app, `PaymentApi-${stage}`, { stage, topology: of });
  app.synth();
  return { stack, templates: new Map(stacksOf(stack).map((each) => [each, Template.fromStack(each)])) };
}

const resourcesIn = (template: Template) =>
  Object.values((template.toJSON() as { Resources: Record<string, CfnResource> }).Resources);

/** Resources per stack, by the stack's path. */
const counts = ({ templates }: Synthesized) =>
  new Map([...templates].map(([stack, template]) => [stack.node.path, resourcesIn(template).length]));

describe("stack size", () => {
  let today: Synthesized;
  let twice: Synthesized;

  beforeAll(() => {
    today = synthesize("dev", topology);
    twice = synthesize("twice", twiceTheRoutes);
  }, 60_000);

  it(`keeps every stack of today's topology, root and nested, at most ${STACK_BUDGET} resources`, () => {
    expect(today.stack.routeStacks.length).toBeGreaterThan(1);
    for (const [path, count] of counts(today)) expect(count, path).toBeLessThanOrEqual(STACK_BUDGET);
  });

  it(`keeps every stack at most ${STACK_BUDGET} resources with twice today's routes, splitting a group past ${MAX_ROUTES_PER_STACK} routes`, () => {
    expect(twiceTheRoutes.routes.length).toBe(2 * routes.length);
    for (const [path, count] of counts(twice)) expect(count, path).toBeLessThanOrEqual(STACK_BUDGET);
    const v2 = twice.stack.routeStacks.filter((routeStack) => routeStack.node.id.startsWith("V2Routes"));
    const parts = Math.ceil(routes.length / MAX_ROUTES_PER_STACK);
    expect(v2.map((routeStack) => [routeStack.node.id, routeStack.functions.size])).toEqual(
      Array.from({ length: parts }, (_, part) => [
        `V2Routes${part === 0 ? "" : part + 1}`,
        Math.min(MAX_ROUTES_PER_STACK, routes.length - part * MAX_ROUTES_PER_STACK),
      ]),
    );
  });

  it("keeps every template under CloudFormation's size limit", () => {
    for (const [stack, template] of twice.templates) {
      expect(JSON.stringify(template.toJSON()).length, stack.node.path).toBeLessThan(TEMPLATE_BYTES_LIMIT);
    }
  });

  it("projects how many routes fit: the cost of a route, of a route stack in the root, and the capacity", () => {
    const { stack, templates } = twice;
    const routeStacks = stack.routeStacks;
    // cdk synth adds an AWS::CDK::Metadata resource to every stack (tests run without it).
    const routeResources = routeStacks
      .flatMap((routeStack) => resourcesIn(templates.get(routeStack) as Template))
      .filter((found) => found.Type !== "AWS::CDK::Metadata");
    const perRoute = routeResources.length / twiceTheRoutes.routes.length;
    // The root's own resources, its metadata included, and one per route stack.
    const rootCount = resourcesIn(templates.get(stack) as Template).length + 1;
    const rootFixed = rootCount - routeStacks.length;
    const fullStack = MAX_ROUTES_PER_STACK * perRoute + 1;
    // Each route stack costs the root one resource, whatever its size: even with a group per route,
    // the root stays within the budget up to this many routes.
    const routesAtOnePerGroup = STACK_BUDGET - rootFixed;
    const averageGroup = routes.length / today.stack.routeStacks.length;

    console.log(
      [
        `Resources per route: ${perRoute} (function, role, policy, log group, integration, route, permission)`,
        `A full route stack (${MAX_ROUTES_PER_STACK} routes): ${fullStack} resources with cdk synth's metadata`,
        `Root stack: ${rootFixed} resources + 1 per route stack (${rootCount} with ${routeStacks.length} route stacks for ${twiceTheRoutes.routes.length} routes)`,
        `Capacity within ${STACK_BUDGET} resources per stack: at least ${routesAtOnePerGroup} routes (one per group), ` +
          `about ${Math.floor(routesAtOnePerGroup * averageGroup)} at today's ${averageGroup.toFixed(1)} routes per group; ` +
          "API Gateway's default quota of 300 routes per HTTP API binds first",
      ].join("\n"),
    );
    expect(perRoute).toBe(7);
    expect(fullStack).toBeLessThanOrEqual(STACK_BUDGET);
    // Twice today's routes, or API Gateway's 300 routes per HTTP API when that binds first.
    expect(routesAtOnePerGroup).toBeGreaterThanOrEqual(Math.min(2 * routes.length, API_GATEWAY_ROUTE_QUOTA));
  });

  describe("grouping", () => {
    const route = (handler: string): RouteDeclaration => ({
      method: "GET",
      path: `/${handler}`,
      handler,
      table: "read",
    });
    const ids = (groups: ReturnType<typeof groupRoutes>) =>
      groups.map((group) => [group.id, group.routes.map((member) => member.handler)]);

    it("groups routes by the first segment of their handler path, in declaration order", () => {
      const declared = ["customers/create", "invoices/get", "customers/tokens/create", "challenges/show"].map(
        route,
      );
      expect(ids(groupRoutes(declared))).toEqual([
        ["CustomersRoutes", ["customers/create", "customers/tokens/create"]],
        ["InvoicesRoutes", ["invoices/get"]],
        ["ChallengesRoutes", ["challenges/show"]],
      ]);
    });

    it("continues a group past the budget in further stacks, and moves no route when one is appended", () => {
      const declared = ["a/1", "a/2", "a/3", "b/1", "a/4"].map(route);
      expect(ids(groupRoutes(declared, 2))).toEqual([
        ["ARoutes", ["a/1", "a/2"]],
        ["ARoutes2", ["a/3", "a/4"]],
        ["BRoutes", ["b/1"]],
      ]);
      expect(ids(groupRoutes([...declared, route("a/5")], 2))).toEqual([
        ["ARoutes", ["a/1", "a/2"]],
        ["ARoutes2", ["a/3", "a/4"]],
        ["ARoutes3", ["a/5"]],
        ["BRoutes", ["b/1"]],
      ]);
    });
  });

  describe("routes in their nested stacks", () => {
    const stackOf = (handler: string) => {
      const fn = twice.stack.functions.get(handler);
      if (!fn) throw new Error(`No function for ${handler}`);
      return Stack.of(fn);
    };
    const templateOf = (stack: Stack) => twice.templates.get(stack) as Template;
    const functionIdIn = (stack: Stack, handler: string) =>
      stack.getLogicalId(twice.stack.functions.get(handler)?.node.defaultChild as CfnElement);

    it("puts each route's function, role, log group, API route, integration and permission in the stack of its group", () => {
      const groups = groupRoutes(twiceTheRoutes.routes);
      for (const group of groups) {
        for (const route of group.routes) {
          const stack = stackOf(route.handler);
          expect(NestedStack.isNestedStack(stack), routeKey(route)).toBe(true);
          expect(stack.node.id, routeKey(route)).toBe(group.id);
          expect(stack.nestedStackParent, routeKey(route)).toBe(twice.stack);
          const template = templateOf(stack);
          const fnId = functionIdIn(stack, route.handler);
          const fn = resourcesOf(template, "AWS::Lambda::Function")[fnId] as CfnResource;
          expect(resourcesOf(template, "AWS::IAM::Role"), routeKey(route)).toHaveProperty(
            referencedId(fn.Properties.Role),
          );
          const logGroup = referencedId((fn.Properties.LoggingConfig as { LogGroup: unknown }).LogGroup);
          expect(resourcesOf(template, "AWS::Logs::LogGroup"), routeKey(route)).toHaveProperty(logGroup);
          const apiRoutes = Object.values(resourcesOf(template, "AWS::ApiGatewayV2::Route")).filter(
            (candidate) => candidate.Properties.RouteKey === routeKey(route),
          );
          expect(apiRoutes, routeKey(route)).toHaveLength(1);
          const target = (apiRoutes[0] as CfnResource).Properties.Target as {
            "Fn::Join": [string, unknown[]];
          };
          const [, parts] = target["Fn::Join"];
          const integration = resourcesOf(template, "AWS::ApiGatewayV2::Integration")[referencedId(parts[1])];
          expect(referencedId(integration?.Properties.IntegrationUri), routeKey(route)).toBe(fnId);
          const permissions = Object.values(resourcesOf(template, "AWS::Lambda::Permission")).filter(
            (permission) => referencedId(permission.Properties.FunctionName) === fnId,
          );
          expect(permissions, routeKey(route)).toHaveLength(1);
        }
      }
      expect(groups.map((group) => group.id).sort()).toEqual(
        twice.stack.routeStacks.map((routeStack) => routeStack.node.id).sort(),
      );
    });

    it("declares the API route of each topology route exactly once across all stacks, and $default in the root only", () => {
      const keysIn = (template: Template) =>
        Object.values(resourcesOf(template, "AWS::ApiGatewayV2::Route")).map(
          (route) => route.Properties.RouteKey,
        );
      const all = [...twice.templates.values()].flatMap(keysIn);
      expect(all.sort()).toEqual([...twiceTheRoutes.routes.map(routeKey), "$default"].sort());
      expect(keysIn(templateOf(twice.stack))).toEqual(["$default"]);
    });

    it("leaves no route's function in the root: only the fallback, the background work and the jobs", () => {
      const rootFunctions = [...twice.stack.functions].filter(([, fn]) => Stack.of(fn) === twice.stack);
      expect(rootFunctions.map(([handler]) => handler).sort()).toEqual(
        [
          "not-found",
          ...topology.streamConsumers.map((consumer) => consumer.handler),
          ...topology.queueWorkers.map((worker) => worker.handler),
          ...Object.values(scheduledJobs).map((job) => job.handler),
          ...Object.values(topology.recurringJobs).map((job) => job.handler),
        ].sort(),
      );
    });

    it("grants each route's function, in its nested stack, only what its declaration says", () => {
      const writes = [
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem",
      ];
      for (const route of twiceTheRoutes.routes) {
        const stack = stackOf(route.handler);
        const template = templateOf(stack);
        const fnId = functionIdIn(stack, route.handler);
        const statements = statementsOf(template, fnId);
        // A read route records its private key's use, on the key-use items alone (payment-stack.test.ts).
        const keyUse = statements.filter((statement) =>
          JSON.stringify(statement.Condition ?? {}).includes("dynamodb:LeadingKeys"),
        );
        expect(actionsOf(keyUse), routeKey(route)).toEqual(
          route.table === "read" && !route.unauthenticated ? ["dynamodb:UpdateItem"] : [],
        );
        const actions = actionsOf(statements.filter((statement) => !keyUse.includes(statement)));
        const has = (prefix: string) => actions.some((action) => action.startsWith(prefix));
        if (route.table === "none") expect(has("dynamodb:"), routeKey(route)).toBe(false);
        else expect(actions, routeKey(route)).toContain("dynamodb:Query");
        expect(actions.filter((action) => writes.includes(action)).sort(), routeKey(route)).toEqual(
          route.table === "write" ? [...writes].sort() : [],
        );
        expect(has("kms:"), routeKey(route)).toBe(Boolean(route.cardVault));
        expect(has("scheduler:"), routeKey(route)).toBe(Boolean(route.scheduler));
        expect(actions.includes("iam:PassRole"), routeKey(route)).toBe(route.scheduler === "schedule");
        expect(actions.every((action) => /^(logs|xray|dynamodb|kms|scheduler|iam):/.test(action))).toBe(true);
        const variables = environmentOf(resourcesOf(template, "AWS::Lambda::Function")[fnId] as CfnResource);
        expect(variables, routeKey(route)).toMatchObject({
          ...(route.table === "none" ? {} : { TABLE_NAME: { Ref: "TableName" } }),
          API_URL: { Ref: "HttpApiEndpoint" },
        });
        if (route.table === "none") expect(variables, routeKey(route)).not.toHaveProperty("TABLE_NAME");
      }
    });

    it("passes a route stack only the root values its routes use, as parameters of its own, and nothing back", () => {
      const expectedParameters = (members: readonly RouteDeclaration[]) => [
        "HttpApiEndpoint",
        "HttpApiId",
        ...(members.some((route) => route.table !== "none") ? ["TableName"] : []),
        ...(members.some((route) => route.cardVault) ? ["CardFingerprintKeyArn", "CardKeyArn"] : []),
        ...(members.some((route) => route.scheduler)
          ? [
              // Each job function's ARN, passed under its variable's name.
              ...Object.values(scheduledJobs).map((job) =>
                job.functionArnVariable.replace(/[^A-Za-z0-9]/g, ""),
              ),
              "ScheduleDeadLettersArn",
              "ScheduleGroup",
              "SchedulerRoleArn",
            ]
          : []),
      ];
      for (const routeStack of twice.stack.routeStacks) {
        const members = twiceTheRoutes.routes.filter((route) => routeStack.functions.has(route.handler));
        const json = templateOf(routeStack).toJSON() as { Parameters?: object; Outputs?: object };
        expect(Object.keys(json.Parameters ?? {}).sort(), routeStack.node.id).toEqual(
          expectedParameters(members).sort(),
        );
        expect(json.Outputs, routeStack.node.id).toBeUndefined();
      }
    });
  });
});
