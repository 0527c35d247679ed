import type { APIGatewayProxyEventV2 } from "aws-lambda";
import qs from "qs";
import { ApiError } from "./errors.ts";

export type Input = Record<string, unknown>;

/**
 * Form fields use bracket or dot notation (`metadata[k]=v`, `device.channel=web`,
 * `details[0][name]=x`, `expand[]=a`); the query string follows the same rules.
 */
const FORM_OPTIONS: qs.IParseOptions = {
  allowDots: true,
  depth: 8,
  arrayLimit: 100,
  parameterLimit: 2000,
  duplicates: "combine",
};

export function parseQuery(rawQueryString: string | undefined): Input {
  return rawQueryString ? withoutNulls(qs.parse(rawQueryString, FORM_OPTIONS)) : {};
}

const malformed = (message: string) => new ApiError(400, "request.validation.malformed-body", message);

/** The request body as an object, from JSON or form encoding; `null` values count as absent. */
export function parseBody(event: APIGatewayProxyEventV2): Input {
  if (!event.body) return {};
  const text = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  if (text.trim() === "") return {};
  const contentType = (event.headers?.["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";

  const json = contentType === "application/json" || contentType.endsWith("+json");
  const form = contentType === "application/x-www-form-urlencoded";
  if (json || (!form && /^\s*[{[]/.test(text))) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw malformed("The request body is not valid JSON.");
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw malformed("The request body must be a JSON object.");
    }
    return withoutNulls(parsed as Input);
  }
  if (form || contentType === "" || contentType === "text/plain") {
    return withoutNulls(qs.parse(text, FORM_OPTIONS));
  }
  throw new ApiError(
    415,
    "request.content-type.unsupported",
    `Content type ${contentType} is not supported: send application/json or application/x-www-form-urlencoded.`,
  );
}

/**
 * Client libraries send `null` for every unset field: it means "not given". A `__proto__` key (which
 * `JSON.parse` keeps as an own key) is dropped: assigning it would set the copy's prototype and let
 * its fields pass for the request's own.
 */
export function withoutNulls(value: Input): Input {
  const out: Input = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === null || item === undefined || key === "__proto__") continue;
    out[key] = isPlainObject(item) ? withoutNulls(item) : Array.isArray(item) ? item.map(cleanItem) : item;
  }
  return out;
}

function cleanItem(item: unknown): unknown {
  return isPlainObject(item) ? withoutNulls(item) : item;
}

function isPlainObject(value: unknown): value is Input {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
