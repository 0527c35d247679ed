import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { ApiError } from "./errors.ts";

/** What a handler answers: a status and the payload beside `success: true`. */
export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

export const ok = (body: Record<string, unknown>, status = 200): Reply => ({ status, body });

export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

/**
 * An HTML page (the 3DS challenge page), with the headers that go with it: never cached, and a
 * Content-Security-Policy of its own (the page decides what it may load and where its form may post).
 * With `location`, a redirect (`status` 3xx) whose `html` is the fallback body.
 */
export interface HtmlReply {
  status: number;
  html: string;
  contentSecurityPolicy: string;
  location?: string;
  /** Whether other pages may frame it (its policy's `frame-ancestors` says which); by default none. */
  framable?: boolean;
}

export const html = (
  status: number,
  body: string,
  options: { contentSecurityPolicy: string; location?: string; framable?: boolean },
): HtmlReply => ({ status, html: body, ...options });

/**
 * A document or file served as it is (`GET /openapi.json`, the reference page's scripts and styles),
 * not in the API's envelope; `body` as bytes when it is `gzip`-encoded or binary.
 */
export interface ContentReply {
  status: number;
  content: string | Buffer;
  contentType: string;
  headers?: Readonly<Record<string, string>>;
}

export const content = (
  status: number,
  body: string | Buffer,
  options: { contentType: string; headers?: Readonly<Record<string, string>> },
): ContentReply => ({ status, content: body, ...options });

/** What a handler may answer: JSON (every API endpoint), an HTML page, or a document as it is. */
export type Answer = Reply | HtmlReply | ContentReply;

export function toResult(reply: Answer, requestId: string): APIGatewayProxyStructuredResultV2 {
  if ("content" in reply) {
    const binary = Buffer.isBuffer(reply.content);
    return {
      statusCode: reply.status,
      headers: {
        "content-type": reply.contentType,
        "x-content-type-options": "nosniff",
        "x-request-id": requestId,
        ...reply.headers,
      },
      body: binary ? reply.content.toString("base64") : (reply.content as string),
      isBase64Encoded: binary,
    };
  }
  if ("html" in reply) {
    return {
      statusCode: reply.status,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": reply.contentSecurityPolicy,
        "referrer-policy": "no-referrer",
        "x-content-type-options": "nosniff",
        ...(reply.framable ? {} : { "x-frame-options": "DENY" }),
        "x-request-id": requestId,
        ...(reply.location ? { location: reply.location } : {}),
      },
      body: reply.html,
    };
  }
  return {
    statusCode: reply.status,
    headers: { ...JSON_HEADERS, "x-request-id": requestId },
    body: storedJson.get(reply.body) ?? JSON.stringify({ success: true, ...reply.body }),
  };
}

/** Answers already serialized to be stored for their `Idempotency-Key`: sent as the same bytes. */
const storedJson = new WeakMap<Reply["body"], string>();

/** A JSON answer's body as it is stored for its `Idempotency-Key`, and then sent (serialized once). */
export function storedReplyJson(reply: Reply): string {
  const json = JSON.stringify({ success: true, ...reply.body });
  storedJson.set(reply.body, json);
  return json;
}

/** The body of an error answer. Nothing internal leaves the service: unknown faults become InternalError. */
export function errorBody(
  error: unknown,
  requestId: string,
): { status: number; body: Record<string, unknown> } {
  if (error instanceof ApiError) {
    return {
      status: error.status,
      body: {
        success: false,
        error_type: error.errorType,
        message: error.message,
        ...(error.invalidFields ? { invalid_fields: error.invalidFields } : {}),
      },
    };
  }
  if (isHandlerTimeout(error)) {
    return {
      status: 504,
      body: {
        success: false,
        error_type: "internal",
        message: `The request did not complete within the function's time limit. Quote request id ${requestId} to support.`,
        request_id: requestId,
      },
    };
  }
  return {
    status: 500,
    body: {
      success: false,
      error_type: "internal",
      message: `An internal error occurred. Quote request id ${requestId} to support.`,
      request_id: requestId,
    },
  };
}

/**
 * The function is about to time out: middy stops waiting for the handler just before Lambda would
 * end it (its `timeoutEarlyInMillis`), so the caller is answered, as the local stack answers a
 * handler that ran out of time: a 504 with the request id.
 */
export function isHandlerTimeout(error: unknown): boolean {
  return (
    error instanceof Error &&
    error.name === "TimeoutError" &&
    (error.cause as { package?: string } | undefined)?.package === "@middy/core"
  );
}

export function errorResult(error: unknown, requestId: string): APIGatewayProxyStructuredResultV2 {
  const { status, body } = errorBody(error, requestId);
  return {
    statusCode: status,
    headers: { ...JSON_HEADERS, "x-request-id": requestId },
    body: JSON.stringify(body),
  };
}
