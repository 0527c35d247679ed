/**
 * The OpenAPI 3.1 document of the API, generated from the topology (every route, its path
 * parameters' shapes, which credentials it takes) and the contract (`routes.ts`: the routes' own zod
 * input schemas, the presented resources' schemas, what each can expand). Nothing in it is written
 * by hand, so it cannot drift from what the handlers parse and answer.
 *
 * JSON Schema comes from zod's core (`zod/v4/core`), which classic zod and `zod/mini` share: request
 * schemas are described as they are read (`io: "input"`), answers as they are produced.
 */
import { type $ZodType, registry, toJSONSchema } from "zod/v4/core";
import { expandablePaths } from "../../shared/expansion/fields.ts";
import { DEFAULT_LIMIT, MAX_LIMIT } from "../../shared/http/listing.ts";
import { isDeclaredPathParameter, PATH_PARAMETERS } from "../../shared/http/path-parameters.ts";
import { functionId, type RouteDeclaration, routeKey, routes } from "../topology.ts";
import { components, errorSchema } from "./resources.ts";
import { contract, type RouteContract } from "./routes.ts";

type Json = Record<string, unknown>;

export const OPENAPI_VERSION = "3.1.1";
/** The API-Version the official libraries send: the version of the API this document describes. */
export const API_VERSION = "1.4.0.0";

const SCHEMAS = "#/components/schemas/";
const ref = (name: string) => ({ $ref: `${SCHEMAS}${name}` });

/** The contract of a route; a route without one is a programming error (a unit test catches it first). */
export function contractOf(route: Pick<RouteDeclaration, "method" | "path">): RouteContract {
  const found = contract[routeKey(route)];
  if (!found) throw new Error(`${routeKey(route)} has no contract in lib/contract/routes.ts`);
  return found;
}

/** The document, with `serverUrl` as its server (the API's own address). */
export function openApiDocument(serverUrl: string): Json {
  const inputs = registry<{ id: string }>();
  const outputs = registry<{ id: string }>();
  for (const [name, schema] of Object.entries(components)) outputs.add(schema, { id: name });
  outputs.add(errorSchema, { id: "Error" });
  // A schema several routes share (refunds of an invoice and of a transaction) is one component,
  // named after the first route that uses it.
  const named = new Map<$ZodType, string>();
  const nameOf = (schema: $ZodType, name: string, into: typeof inputs) => {
    const known = named.get(schema);
    if (known) return known;
    named.set(schema, name);
    into.add(schema, { id: name });
    return name;
  };
  const names = new Map<RouteDeclaration, { request?: string; answer?: string }>();
  for (const route of routes) {
    const spec = contractOf(route);
    const id = functionId(route.handler);
    names.set(route, {
      ...(spec.body ? { request: nameOf(spec.body, `${id}Request`, inputs) } : {}),
      ...(spec.answer.kind === "json" ? { answer: nameOf(spec.answer.schema, `${id}Answer`, outputs) } : {}),
    });
  }
  const schemas = {
    ...jsonSchemas(inputs, "input"),
    ...jsonSchemas(outputs, "output"),
  };

  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const operations = paths[route.path] ?? {};
    operations[route.method.toLowerCase()] = operation(route, names.get(route) ?? {});
    paths[route.path] = operations;
  }

  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: "Payment API",
      version: API_VERSION,
      description:
        "Customers, invoices, payments, subscriptions and webhooks in front of several payment providers. " +
        "Bodies are JSON or form-encoded (nested keys in bracket or dot notation); `null` means not given. " +
        "Every error answers a non-2xx status and the `Error` shape.",
    },
    servers: [{ url: serverUrl }],
    security: [{ privateKey: [] }],
    tags: [...new Set(routes.map(tagOf))].map((name) => ({ name })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        privateKey: {
          type: "http",
          scheme: "basic",
          description:
            "HTTP Basic: the environment's project id (`test-proj_…` or `proj_…`) and its private key.",
        },
        publicKey: {
          type: "http",
          scheme: "basic",
          description:
            "HTTP Basic with the project id alone and an empty password, as browser and mobile libraries send it.",
        },
      },
    },
  };
}

function jsonSchemas(from: ReturnType<typeof registry<{ id: string }>>, io: "input" | "output"): Json {
  const { schemas } = toJSONSchema(from, {
    target: "draft-2020-12",
    io,
    // A value a parser computes (a transform) is described by what it accepts.
    unrepresentable: "any",
    uri: (id) => `${SCHEMAS}${id}`,
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => {
      // Components are found by their place in the document: no `$id` of their own.
      const { $schema, $id, ...rest } = schema as Json;
      return [name, rest];
    }),
  );
}

const tagOf = (route: RouteDeclaration) => route.handler.split("/")[0] ?? route.handler;

function operation(route: RouteDeclaration, named: { request?: string; answer?: string }): Json {
  const spec = contractOf(route);
  const result: Json = {
    operationId: functionId(route.handler),
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [tagOf(route)],
    parameters: parameters(route, spec),
  };
  if (route.unauthenticated) result.security = [];
  else if (spec.credentials === "project-id") result.security = [{ publicKey: [] }, { privateKey: [] }];
  if (named.request) {
    const schema = ref(named.request);
    const examples = spec.example ? { example: spec.example } : {};
    result.requestBody = {
      required: false,
      content: {
        "application/json": { schema, ...examples },
        "application/x-www-form-urlencoded": { schema },
      },
    };
  }
  result.responses = responses(route, spec, named.answer);
  return result;
}

function parameters(route: RouteDeclaration, spec: RouteContract): Json[] {
  const inPath = [...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name = ""]) => {
    if (!isDeclaredPathParameter(name)) throw new Error(`{${name}} of ${routeKey(route)} has no shape`);
    return {
      name,
      in: "path",
      required: true,
      schema: { type: "string", pattern: PATH_PARAMETERS[name].pattern.source },
    };
  });
  const listing = spec.listing
    ? [
        query(
          "limit",
          { type: "integer", minimum: 0, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
          "0 means the default",
        ),
        query("order", { type: "string", enum: ["asc", "desc"], default: "desc" }),
        query("start_after", { type: "string" }, "The id of the item the page starts after"),
        query("end_before", { type: "string" }, "The id of the item the page ends before"),
      ]
    : [];
  const expand = spec.expand
    ? [
        {
          ...query(
            "expand",
            { type: "array", items: { type: "string", enum: expandablePaths(spec.expand) } },
            "Links to show in full, beside their `_id`. Also `expand[]=a`, `expand=a,b`, or a list in the body.",
          ),
          style: "form",
          explode: true,
        },
      ]
    : [];
  const own = spec.query
    ? Object.entries(spec.query.shape).map(([name, schema]) =>
        query(name, toJSONSchema(schema as $ZodType, { io: "input", unrepresentable: "any" }) as Json),
      )
    : [];
  return [...inPath, ...listing, ...expand, ...own];
}

function query(name: string, schema: Json, description?: string): Json {
  const { $schema, ...rest } = schema;
  return { name, in: "query", required: false, schema: rest, ...(description ? { description } : {}) };
}

const errorContent = { "application/json": { schema: ref("Error") } };

function responses(route: RouteDeclaration, spec: RouteContract, answer?: string): Json {
  if (spec.answer.kind === "document") {
    return {
      [route.method === "POST" ? "303" : "200"]: {
        description: spec.answer.description,
        content: { [spec.answer.contentType]: { schema: {} } },
      },
      // A page's own 404 is a page; a document's or a file's is the error shape.
      "404": {
        description: "Not found",
        content: spec.answer.contentType === "text/html" ? { "text/html": { schema: {} } } : errorContent,
      },
    };
  }
  const errors: Json = {
    "400": {
      description: "A field could not be validated (`invalid_fields` names it)",
      content: errorContent,
    },
    ...(route.unauthenticated
      ? {}
      : { "401": { description: "The credentials could not be verified", content: errorContent } }),
    "404": { description: "No such resource (`resource.<name>.not-found`)", content: errorContent },
    default: { description: "Any other error", content: errorContent },
  };
  return {
    [String(spec.answer.status)]: {
      description: spec.summary,
      content: { "application/json": { schema: answer ? ref(answer) : {} } },
    },
    ...errors,
  };
}
