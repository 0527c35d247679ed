import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { ApiError } from "./errors.ts";

/** What a handler answers: a status and the payload beside `success: true`. */
export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

export const ok = (body: Record<string, unknown>, status = 200): Reply => ({ status, body });

export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

export function toResult(reply: Reply, requestId: string): APIGatewayProxyStructuredResultV2 {
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
