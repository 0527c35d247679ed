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

/** A script served to browsers (`shared/http/assets.ts`), which they may keep for `cacheSeconds`. */
export interface AssetReply {
  status: number;
  asset: string;
  contentType: string;
  cacheSeconds: number;
}

/** What a handler may answer: JSON (every API endpoint), an HTML page, or a browser asset. */
export type Answer = Reply | HtmlReply | AssetReply;

export function toResult(reply: Answer, requestId: string): APIGatewayProxyStructuredResultV2 {
  if ("asset" in reply) {
    return {
      statusCode: reply.status,
      headers: {
        "content-type": reply.contentType,
        "cache-control": `public, max-age=${reply.cacheSeconds}`,
        "x-content-type-options": "nosniff",
        "x-request-id": requestId,
      },
      body: reply.asset,
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
    body: JSON.stringify({ success: true, ...reply.body }),
  };
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

export function errorResult(error: unknown, requestId: string): APIGatewayProxyStructuredResultV2 {
  const { status, body } = errorBody(error, requestId);
  return {
    statusCode: status,
    headers: { ...JSON_HEADERS, "x-request-id": requestId },
    body: JSON.stringify(body),
  };
}
