import { CfnParameter, Duration, NestedStack, type RemovalPolicy, Validations } from "aws-cdk-lib";
import { HttpMethod as ApiMethod, HttpApi, HttpRoute, HttpRouteKey } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { Table } from "aws-cdk-lib/aws-dynamodb";
import { Key } from "aws-cdk-lib/aws-kms";
import type { Construct } from "constructs";
import { ApiFunction, type CardVaultKeys, grantCardVault, grantKeyUse, grantTable } from "./api-function.ts";
import { grantScheduling, type SchedulingRefs } from "./scheduling.ts";
import { functionId, type RouteDeclaration, routeKey } from "./topology.ts";

/**
 * The routes of `lib/topology.ts` live in nested stacks, one per resource group, because each route
 * costs about seven CloudFormation resources (function, role, policy, log group, integration, route,
 * permission) and CloudFormation refuses a stack of more than 500: the root stack keeps what the
 * routes share (table, keys, HTTP API, stage, queues, jobs, alarms) and one resource per route stack.
 *
 * At most this many routes share a stack: 7 resources each is 210, well under 500, with room for
 * more resources per route (an alarm per function would make it 240).
 */
export const MAX_ROUTES_PER_STACK = 30;

/** The routes of one nested stack. */
export interface RouteGroup {
  /** Construct id of the nested stack: `CustomersRoutes`, and past the budget `CustomersRoutes2`, … */
  id: string;
  /** The first segment of the routes' handler paths (`customers` for `customers/tokens/create`). */
  resource: string;
  routes: RouteDeclaration[];
}

/**
 * Groups routes by the first segment of their handler path, in declaration order; a group of more
 * than `maxRoutes` continues in a second stack, and so on. Adding a route to the topology thus
 * needs no CDK change.
 *
 * A route that changes stacks is created in its new stack before it is deleted from the old one, in
 * the same deployment, and API Gateway refuses the same route key twice: append a group's new
 * routes after its existing ones, so that no route moves when a group overflows its stack.
 */
export function groupRoutes(
  routes: readonly RouteDeclaration[],
  maxRoutes: number = MAX_ROUTES_PER_STACK,
): RouteGroup[] {
  const byResource = new Map<string, RouteDeclaration[]>();
  for (const route of routes) {
    const [resource = route.handler] = route.handler.split("/");
    byResource.set(resource, [...(byResource.get(resource) ?? []), route]);
  }
  return [...byResource].flatMap(([resource, members]) => {
    const parts = Math.ceil(members.length / maxRoutes);
    return Array.from({ length: parts }, (_, part) => ({
      id: `${functionId(resource)}Routes${part === 0 ? "" : part + 1}`,
      resource,
      routes: members.slice(part * maxRoutes, (part + 1) * maxRoutes),
    }));
  });
}

/**
 * What the routes use of the root stack, as values of the root stack. A route stack receives each
 * as a parameter of its own rather than referring to the root's constructs: its grants then name
 * them as cdk-nag will see them (`nagRendering`), and the stack's inputs are these and no more.
 */
export interface RouteStackInputs {
  tableName: string;
  apiId: string;
  apiEndpoint: string;
  cardKeyArns: { encryption: string; fingerprint: string };
  scheduling: SchedulingRefs;
}

export interface RouteStackProps {
  routes: readonly RouteDeclaration[];
  inputs: RouteStackInputs;
  /** Environment every function gets (stage, service name, log level, …). */
  environment: Record<string, string>;
  removalPolicy: RemovalPolicy;
  description: string;
}

/**
 * A nested stack of routes: for each, its function (least-privilege role, log group, `API_URL`),
 * and its API route with the Lambda integration and the permission to invoke the function.
 */
export class RouteStack extends NestedStack {
  /** The function of each route, by handler. */
  readonly functions = new Map<string, ApiFunction>();

  constructor(scope: Construct, id: string, props: RouteStackProps) {
    super(scope, id, { description: props.description });
    const { inputs } = props;
    const table = once(() =>
      Table.fromTableAttributes(this, "Table", {
        tableName: this.input("TableName", inputs.tableName),
        grantIndexPermissions: true,
      }),
    );
    const api = HttpApi.fromHttpApiAttributes(this, "HttpApi", {
      httpApiId: this.input("HttpApiId", inputs.apiId),
      apiEndpoint: this.input("HttpApiEndpoint", inputs.apiEndpoint),
    });
    const cardKeys = once(
      (): CardVaultKeys => ({
        encryption: Key.fromKeyArn(this, "CardKey", this.input("CardKeyArn", inputs.cardKeyArns.encryption)),
        fingerprint: Key.fromKeyArn(
          this,
          "CardFingerprintKey",
          this.input("CardFingerprintKeyArn", inputs.cardKeyArns.fingerprint),
        ),
      }),
    );
    const scheduling = once(
      (): SchedulingRefs => ({
        groupName: this.input("ScheduleGroup", inputs.scheduling.groupName),
        roleArn: this.input("SchedulerRoleArn", inputs.scheduling.roleArn),
        deadLetterArn: this.input("ScheduleDeadLettersArn", inputs.scheduling.deadLetterArn),
        jobFunctionArns: Object.fromEntries(
          Object.entries(inputs.scheduling.jobFunctionArns).map(([variable, arn]) => [
            variable,
            this.input(variable, arn),
          ]),
        ),
      }),
    );

    for (const route of props.routes) {
      const id = functionId(route.handler);
      const fn = new ApiFunction(this, id, {
        handler: route.handler,
        environment: props.environment,
        logRemovalPolicy: props.removalPolicy,
        ...(route.files ? { files: route.files } : {}),
        ...(route.browserAssets ? { browserAssets: true } : {}),
        ...(route.apiDocument ? { apiDocument: true } : {}),
        ...(route.timeoutSeconds ? { timeout: Duration.seconds(route.timeoutSeconds) } : {}),
      });
      // Links the API hands out (3DS challenge pages, checkout pages) are built from API_URL. The API's endpoint
      // is an attribute of the API alone (not of its routes or stage), so the functions can name
      // it without a dependency cycle; a custom domain would be passed here instead.
      fn.addEnvironment("API_URL", api.apiEndpoint);
      if (route.table !== "none") grantTable(fn, table(), route.table);
      // A read route opened by a private key records the key's use (`shared/projects/key-use.ts`).
      if (route.table === "read" && !route.unauthenticated) grantKeyUse(fn, table());
      if (route.cardVault) grantCardVault(fn, cardKeys(), route.cardVault);
      if (route.scheduler) grantScheduling(fn, scheduling(), route.scheduler);
      this.functions.set(route.handler, fn);

      const apiRoute = new HttpRoute(this, `${id}Route`, {
        httpApi: api,
        routeKey: HttpRouteKey.with(route.path, ApiMethod[route.method]),
        integration: new HttpLambdaIntegration(`${id}Integration`, fn),
      });
      Validations.of(apiRoute).acknowledge({
        id: "AwsSolutions-APIG4",
        reason: route.unauthenticated
          ? `${routeKey(route)} needs no authorizer: ${route.unauthenticated}`
          : `${routeKey(route)} authenticates its caller itself: HTTP Basic credentials are verified inside the handler against hashed keys (architecture decision).`,
      });
    }
  }

  /** A value of the parent stack in this one: a parameter of this stack, which the parent sets. */
  private input(name: string, parentValue: string): string {
    const parameter = new CfnParameter(this, name, { type: "String" });
    this.setParameter(parameter.logicalId, parentValue);
    return parameter.valueAsString;
  }
}

/** `make()`'s value, made on first use: a stack imports only what its routes use. */
function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
}
