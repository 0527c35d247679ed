import { randomBytes, randomUUID } from "node:crypto";
import { isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Callback, Context } from "aws-lambda";
import { functionId, handlerEntry } from "../topology.ts";

/**
 * How the local stack runs a handler of `functions/` as Lambda would: the module is imported once,
 * its `handler` is called with the event and a Lambda context, and the call has the function's
 * time limit. The HTTP server (API Gateway) and the stream and queue pollers all call handlers
 * through here.
 */
export const LOCAL_ACCOUNT_ID = "000000000000";
const MEMORY_LIMIT_MB = "1024";

export type LambdaHandler = (event: unknown, context: Context, callback: Callback) => unknown;

/** Imports each handler module on first use, from `functions/<handler>.ts`, once. */
export function handlerLoader(rootDir: string) {
  const loaded = new Map<string, Promise<LambdaHandler>>();
  return (handler: string): Promise<LambdaHandler> => {
    let module = loaded.get(handler);
    if (!module) {
      const entry = handlerEntry(handler);
      const file = isAbsolute(entry) ? entry : join(rootDir, entry);
      module = import(pathToFileURL(file).href).then((exports: { handler?: unknown }) => {
        if (typeof exports.handler !== "function") {
          throw new Error(`${entry} does not export a function named handler.`);
        }
        return exports.handler as LambdaHandler;
      });
      // A failed import is not kept, so a fixed file is picked up by the next request where possible.
      module.catch(() => loaded.delete(handler));
      loaded.set(handler, module);
    }
    return module;
  };
}

export class HandlerTimeout extends Error {}

/**
 * Calls the handler as the Node.js Lambda runtime does: an async handler's promise decides, a
 * callback-style handler answers through its callback (or the legacy `context.done/succeed/fail`).
 * Past `timeoutMs` the call fails with {@link HandlerTimeout}.
 */
export function invoke(
  handle: LambdaHandler,
  event: unknown,
  context: Context,
  timeoutMs: number,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new HandlerTimeout("handler timed out")), timeoutMs);
    const settle = (error: unknown, result?: unknown) => {
      clearTimeout(timer);
      if (error !== null && error !== undefined) reject(error);
      else resolve(result);
    };
    context.done = (error, result) => settle(error, result);
    context.succeed = (result: unknown) => settle(undefined, result);
    context.fail = (error) => settle(error instanceof Error ? error : new Error(String(error)));
    try {
      const returned = handle(event, context, (error, result) => settle(error, result));
      if (isThenable(returned)) returned.then((result) => settle(undefined, result), settle);
    } catch (error) {
      settle(error);
    }
  });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
}

/**
 * What stays the same across a function's invocations, as in one Lambda container: its name, ARN
 * and log stream. Made once per handler (a request's own part is its id and its deadline).
 */
const functionIdentities = new Map<string, Omit<Context, "awsRequestId" | "getRemainingTimeInMillis">>();

function functionIdentity(handler: string) {
  let identity = functionIdentities.get(handler);
  if (!identity) {
    const functionName = `payment-api-local-${functionId(handler)}`;
    const region = process.env.AWS_REGION ?? "us-east-1";
    const day = new Date().toISOString().slice(0, 10).replaceAll("-", "/");
    const unset = () => {
      throw new Error("replaced for each invocation");
    };
    identity = {
      functionName,
      functionVersion: "$LATEST",
      memoryLimitInMB: MEMORY_LIMIT_MB,
      invokedFunctionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
      logGroupName: `/aws/lambda/${functionName}`,
      logStreamName: `${day}/[$LATEST]${randomBytes(16).toString("hex")}`,
      callbackWaitsForEmptyEventLoop: true,
      done: unset,
      fail: unset,
      succeed: unset,
    };
    functionIdentities.set(handler, identity);
  }
  return identity;
}

export function lambdaContext(handler: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    ...functionIdentity(handler),
    awsRequestId: randomUUID(),
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}
