import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { IParseOptions } from "qs";
import parseQs from "qs/lib/parse.js";
import { ApiError } from "./errors.ts";

export type Input = Record<string, unknown>;

/**
 * Bounds on what a request may carry, the same for JSON bodies, form bodies and query strings,
 * checked before anything is built from the input: a 4,000-level JSON body overflowed the stack.
 */
export const INPUT_LIMITS = {
  /** Bytes of a body, once decoded (API Gateway passes up to 10 MB; this API's payloads are small). */
  bodyBytes: 1024 * 1024,
  /** Levels of objects and lists, the body itself being the first: `{"a": {"b": 1}}` has 2. */
  depth: 10,
  /** Members of objects and items of lists, at every level together. */
  fields: 10_000,
} as const;

/**
 * Form fields use bracket or dot notation (`metadata[k]=v`, `device.channel=web`,
 * `details[0][name]=x`, `expand[]=a`); the query string follows the same rules. Past the array
 * limit a list arrives as an object keyed by index (the invoice schema reads both). Each bracket or
 * dot opens one level below the body's own.
 *
 * `qs` is used as published; only its `side-channel` dependency is replaced (`overrides` in
 * package.json) by `@nolyfill/side-channel`, the same API on a `WeakMap` for Node, without the
 * engine-compatibility layer (`object-inspect`, `get-intrinsic`…) that was 34 KiB of every bundle.
 */
const FORM_OPTIONS: IParseOptions = {
  allowDots: true,
  depth: INPUT_LIMITS.depth - 1,
  strictDepth: true,
  arrayLimit: 100,
  parameterLimit: INPUT_LIMITS.fields,
  duplicates: "combine",
};

type Source = "request body" | "query string";

const malformed = (message: string) => new ApiError(400, "request.validation.malformed-body", message);

const tooDeep = (source: Source) =>
  new ApiError(
    400,
    "request.validation.nesting-too-deep",
    `The ${source} nests objects and lists more than ${INPUT_LIMITS.depth} levels deep.`,
  );

const tooManyFields = (source: Source) =>
  new ApiError(
    400,
    "request.validation.too-many-fields",
    `The ${source} has more than ${INPUT_LIMITS.fields} fields (object members and list items).`,
  );

/**
 * The query string as an object. Client libraries mark a parameter they do not give with an empty
 * value, a bare key without `=`, or the literal `null` (`?&filter=&limit=&expand_merchant_accounts=null`):
 * such a parameter, or such an item of a list, is left out, as `null` is from JSON bodies.
 */
export function parseQuery(rawQueryString: string | undefined): Input {
  return rawQueryString ? withoutUnset(parseForm(rawQueryString, "query string")) : {};
}

const isUnset = (value: unknown) => value === "" || value === "null";

function withoutUnset(query: Input): Input {
  const given: Input = {};
  for (const [key, value] of Object.entries(query)) {
    if (isUnset(value)) continue;
    given[key] = Array.isArray(value) ? value.filter((item) => !isUnset(item)) : value;
  }
  return given;
}

/** The request body as an object, from JSON or form encoding; `null` values count as absent. */
export function parseBody(event: APIGatewayProxyEventV2): Input {
  if (!event.body) return {};
  const text = bodyText(event.body, event.isBase64Encoded);
  if (text.trim() === "") return {};
  const contentType = (event.headers?.["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";

  const json = contentType === "application/json" || contentType.endsWith("+json");
  const form = contentType === "application/x-www-form-urlencoded";
  if (json || (!form && /^\s*[{[]/.test(text))) return parseJson(text);
  if (form || contentType === "" || contentType === "text/plain") return parseForm(text, "request body");
  throw new ApiError(
    415,
    "request.content-type.unsupported",
    `Content type ${contentType} is not supported: send application/json or application/x-www-form-urlencoded.`,
  );
}

/** The body exactly as sent (decoded from base64 when API Gateway encoded it), within the size limit. */
export function rawBody(event: APIGatewayProxyEventV2): string {
  return event.body ? bodyText(event.body, event.isBase64Encoded) : "";
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function bodyText(body: string, isBase64Encoded: boolean): string {
  const encoding = isBase64Encoded ? "base64" : "utf8";
  // The decoded size, known without decoding.
  if (Buffer.byteLength(body, encoding) > INPUT_LIMITS.bodyBytes) tooLarge();
  if (!isBase64Encoded) return body;
  try {
    return utf8.decode(Buffer.from(body, "base64"));
  } catch {
    throw malformed("The request body is not valid UTF-8.");
  }
}

function tooLarge(): never {
  throw new ApiError(
    413,
    "request.body.too-large",
    `The request body is larger than ${INPUT_LIMITS.bodyBytes} bytes.`,
  );
}

function parseJson(text: string): Input {
  checkJsonBounds(text);
  let parsed: unknown;
  try {
    parsed = parseWithNumbersAsText(text, numberAsSourceText);
  } catch {
    throw malformed("The request body is not valid JSON.");
  }
  if (!isPlainObject(parsed)) throw malformed("The request body must be a JSON object.");
  return cleaned(parsed, "request body");
}

/**
 * A JSON number is read as the text it was sent as (`1.10` stays "1.10", `1e2` stays "1e2"): amounts
 * keep their decimals, and a JSON body reads exactly like a form body, which carries strings only
 * (every schema reads numbers, integers and amounts alike, from text). The reviver's `context`
 * (Node 22) is not in TypeScript's `lib` yet. It recurses as deep as the input nests: the nesting is
 * bounded before it runs.
 */
type Reviver = (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown;
const parseWithNumbersAsText = JSON.parse as (text: string, reviver: Reviver) => unknown;
const numberAsSourceText: Reviver = (_key, value, context) =>
  typeof value === "number" ? context.source : value;

/**
 * Refuses JSON text that nests too deep or holds too many fields before it is parsed, in one pass
 * over the text that keeps no stack. Each comma outside strings separates two fields of one
 * object or list, so more commas than the field limit mean more fields than it.
 */
function checkJsonBounds(text: string): void {
  let depth = 0;
  let commas = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === BACKSLASH) i += 1;
      else if (char === QUOTE) inString = false;
    } else if (char === QUOTE) {
      inString = true;
    } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      depth += 1;
      if (depth > INPUT_LIMITS.depth) throw tooDeep("request body");
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
      depth -= 1;
    } else if (char === COMMA) {
      commas += 1;
      if (commas >= INPUT_LIMITS.fields) throw tooManyFields("request body");
    }
  }
}

const [QUOTE, BACKSLASH, COMMA, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET] = [...'"\\,{}[]'].map(
  (char) => char.charCodeAt(0),
);

function parseForm(text: string, source: Source): Input {
  // Every parameter makes at least one field: counted before `qs` does any work on them.
  if (countParameters(text) > INPUT_LIMITS.fields) throw tooManyFields(source);
  let parsed: Input;
  try {
    parsed = parseQs(text, FORM_OPTIONS);
  } catch (error) {
    // With `strictDepth`, qs refuses keys nested past `depth` with a RangeError (and nothing else).
    if (error instanceof RangeError) throw tooDeep(source);
    throw error;
  }
  return cleaned(parsed, source);
}

function countParameters(text: string): number {
  let count = 0;
  let start = 0;
  while (start <= text.length) {
    const end = text.indexOf("&", start);
    const stop = end < 0 ? text.length : end;
    if (stop > start) count += 1;
    start = stop + 1;
  }
  return count;
}

/**
 * A copy of parsed input as handlers read it, within the limits (counted on the parsed value
 * itself, so both encodings are held to the same numbers). Client libraries send `null` for every
 * unset field: it means "not given" and is left out of objects (a list keeps its positions). A key
 * every object has (`__proto__`, `constructor`, `toString`, …) is dropped from JSON as `qs` drops it
 * from forms: `__proto__` (which `JSON.parse` keeps as an own key) would set the copy's prototype
 * and let its fields pass for the request's own, and an own `constructor` in a stored map (metadata)
 * makes the DynamoDB marshaller take it for a class instance and fail the write. The recursion stops
 * at the depth limit, so it cannot exhaust the stack.
 */
function cleaned(input: Input, source: Source): Input {
  let fields = 0;
  const count = (added: number) => {
    fields += added;
    if (fields > INPUT_LIMITS.fields) throw tooManyFields(source);
  };
  const copy = (value: unknown, depth: number): unknown => {
    if (typeof value !== "object" || value === null) return value;
    if (depth > INPUT_LIMITS.depth) throw tooDeep(source);
    if (Array.isArray(value)) {
      count(value.length);
      return value.map((item) => copy(item, depth + 1));
    }
    const out: Input = {};
    for (const [key, item] of Object.entries(value)) {
      count(1);
      if (item === null || item === undefined || Object.hasOwn(Object.prototype, key)) continue;
      out[key] = copy(item, depth + 1);
    }
    return out;
  };
  return copy(input, 1) as Input;
}

function isPlainObject(value: unknown): value is Input {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
