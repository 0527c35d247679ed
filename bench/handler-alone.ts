import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from "aws-lambda";
import { HANDLER_TIMEOUT_MS } from "../lib/local/http-server.ts";
import { handlerLoader, invoke, lambdaContext } from "../lib/local/lambda.ts";
import { repoRoot } from "../lib/local/paths.ts";
import { routes } from "../lib/topology.ts";

/**
 * What a deployed function adds to its DynamoDB calls: the route's Lambda handler called in-process
 * with the API Gateway (payload 2.0) event a request makes, as the Lambda runtime calls it, with no
 * HTTP server, no local API and no client in between.
 */
export interface HandlerRequest {
  /** As in `lib/topology.ts`, e.g. `GET /customers/{customer_id}`. */
  routeKey: string;
  /** The path as sent. */
  path: string;
  body?: unknown;
  authorization: string;
}

const load = handlerLoader(repoRoot);

/** The route's handler, loaded once, and a function calling it with `request`'s event. */
export async function handlerAlone(
  request: HandlerRequest | ((i: number) => HandlerRequest),
): Promise<(i: number) => Promise<unknown>> {
  const requestOf = typeof request === "function" ? request : () => request;
  const [method, routePath] = requestOf(0).routeKey.split(" ");
  const route = routes.find((candidate) => candidate.method === method && candidate.path === routePath);
  if (!route) throw new Error(`No route ${requestOf(0).routeKey} in lib/topology.ts`);
  const handle = await load(route.handler);
  // API Gateway's share (making the event) stays out of the function's time as far as it can: the
  // event of a request is made once and only its id and time are new on each call.
  const events = new Map<string, APIGatewayProxyEventV2>();
  let sequence = 0;
  return async (i) => {
    const own = requestOf(i);
    const eventKey = `${own.path}\n${own.authorization}\n${JSON.stringify(own.body)}`;
    let made = events.get(eventKey);
    if (!made) {
      made = apiGatewayEvent(own);
      events.set(eventKey, made);
    }
    const now = Date.now();
    const event = {
      ...made,
      requestContext: { ...made.requestContext, requestId: `bench-${sequence++}`, timeEpoch: now },
    };
    const result = (await invoke(
      handle,
      event,
      lambdaContext(route.handler, HANDLER_TIMEOUT_MS),
      HANDLER_TIMEOUT_MS,
    )) as Exclude<APIGatewayProxyResultV2, string>;
    const status = result.statusCode ?? 200;
    if (status >= 300) throw new Error(`${requestOf(i).routeKey} answered ${status}: ${result.body}`);
    return result;
  };
}

function apiGatewayEvent(request: HandlerRequest): APIGatewayProxyEventV2 {
  const [method = "GET", routePath = "/"] = request.routeKey.split(" ");
  const path = request.path.split("?")[0] ?? "/";
  const rawQueryString = request.path.includes("?") ? request.path.slice(request.path.indexOf("?") + 1) : "";
  const pathParameters: Record<string, string> = {};
  const routeSegments = routePath.split("/");
  path.split("/").forEach((segment, index) => {
    const name = /^\{(.+)\}$/.exec(routeSegments[index] ?? "")?.[1];
    if (name) pathParameters[name] = decodeURIComponent(segment);
  });
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  const headers: Record<string, string> = {
    authorization: request.authorization,
    host: "bench.execute-api.us-east-1.amazonaws.com",
    "user-agent": "bench",
    ...(body === undefined
      ? {}
      : { "content-type": "application/json", "content-length": String(body.length) }),
  };
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: request.routeKey,
    rawPath: path,
    rawQueryString,
    headers,
    ...(rawQueryString
      ? { queryStringParameters: Object.fromEntries(new URLSearchParams(rawQueryString)) }
      : {}),
    requestContext: {
      accountId: "000000000000",
      apiId: "bench",
      domainName: headers.host as string,
      domainPrefix: "bench",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "203.0.113.7", userAgent: "bench" },
      requestId: `bench-${now}-${Math.random().toString(36).slice(2)}`,
      routeKey: request.routeKey,
      stage: "$default",
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(Object.keys(pathParameters).length > 0 ? { pathParameters } : {}),
    ...(body === undefined ? { isBase64Encoded: false } : { body, isBase64Encoded: false }),
  };
}
