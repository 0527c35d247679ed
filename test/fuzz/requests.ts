/**
 * What the fuzzer sends: requests generated with fast-check for every route of `lib/topology.ts`
 * (read from the table, so a new route is fuzzed as soon as it is declared), plus unknown routes and
 * methods. Each request mixes plausible input (fixture ids, test cards, amounts) with hostile input:
 * wrong types, huge and deep bodies in JSON and form encoding, hostile keys, bad ids and cursors,
 * broken encodings and content types, odd headers and credentials.
 *
 * Bodies are described, not built (`BodyRecipe`): a megabyte string or a 5,000-level body is only
 * made when the request is sent, so thousands of requests can be generated up front.
 */
import fc from "fast-check";
import qs from "qs";
import { type RouteDeclaration, routes } from "../../lib/topology.ts";
import { INPUT_LIMITS } from "../../shared/http/input.ts";
import { isDeclaredPathParameter } from "../../shared/http/path-parameters.ts";
import { wellFormed } from "../support/paths.ts";
import { basicAuthorization } from "../support/raw-http.ts";
import type { Environment, Fixture, Fixtures } from "./fixtures.ts";

// ---- the request ------------------------------------------------------------------------------

/** A JSON number written as is (`1e2`, `1.10`, `-0`): `JSON.stringify` would rewrite it. */
export class RawNumber {
  constructor(readonly text: string) {}
}
export type Tree = string | boolean | null | RawNumber | Tree[] | { [key: string]: Tree };

export type BodyRecipe =
  | { kind: "json"; tree: Tree; contentType: string }
  | {
      kind: "form";
      tree: Tree;
      contentType: string;
      arrayFormat: "indices" | "brackets" | "repeat";
      dots: boolean;
    }
  | { kind: "text"; text: string; contentType: string }
  | { kind: "bytes"; hex: string; contentType: string }
  | { kind: "truncated-json"; tree: Tree; keep: number }
  | { kind: "deep"; levels: number; style: "json-object" | "json-array" | "form-brackets" | "form-dots" }
  | { kind: "many-fields"; count: number; style: "json" | "form" }
  | { kind: "large"; bytes: number; contentType: string };

export type Credential =
  | { kind: "private" | "public" | "wrong-key"; environment: Environment }
  | { kind: "none" }
  | { kind: "bad"; authorization: string; what: string };

export interface FuzzRequest {
  /** The route it was generated for (`GET /customers/{customer_id}`), or `unrouted`. */
  route: string;
  method: string;
  /** Path and query as sent, already percent-encoded. */
  target: string;
  credential: Credential;
  headers: Record<string, string>;
  body?: BodyRecipe;
  /** Which fixtures it addresses (`invoice_id=zero-amount`), to tell known faults apart. */
  labels: string[];
}

// ---- values -----------------------------------------------------------------------------------

/** Header values Node sends: printable latin1 only. */
const headerText = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
      fc.integer({ min: 0xa0, max: 0xff }).map((code) => String.fromCharCode(code)),
    ),
    maxLength,
  });

/** Percent-encodes every byte of the UTF-8 form of `text` but the unreserved characters. */
export function percentEncode(text: string): string {
  return [...Buffer.from(text, "utf8")]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9_.~-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
}

const HOSTILE_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "",
  " ",
  "a.b",
  "a[b]",
  "amount[]",
  "$where",
  "名前",
  "k\u0000",
  "🙂",
  "x".repeat(300),
];

const RAW_NUMBERS = [
  "0",
  "-0",
  "1",
  "1.10",
  "10.50",
  "1e2",
  "1E+2",
  "1e-400",
  "1e400",
  "-1",
  "0.1",
  "12345678901234567890",
];

const NUMERIC_TEXT = [
  "10.00",
  "0",
  "0.00",
  "-1",
  "1e2",
  "10.123",
  "999999999999.99",
  "9999999999999",
  "NaN",
  "Infinity",
  "１０",
];

const jsonScalar = (fixtures: readonly string[]): fc.Arbitrary<Tree> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
    { weight: 1, arbitrary: fc.integer({ min: 256, max: 3000 }).map((n) => "é".repeat(n)) },
    { weight: 2, arbitrary: fc.constantFrom(...NUMERIC_TEXT) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((text) => new RawNumber(text)) },
    { weight: 2, arbitrary: fc.boolean() },
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: fixtures.length > 0 ? fc.constantFrom(...fixtures) : fc.constant("cust_x") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "true",
        "false",
        "1",
        "USD",
        "usd",
        "XXX",
        "JPY",
        "KWD",
        "2099-01-01T00:00:00Z",
      ),
    },
  );

/** Any JSON-ish value, a few levels deep, with hostile keys now and then. */
const anyTree = (fixtures: readonly string[]): fc.Arbitrary<Tree> =>
  fc.letrec<{ tree: Tree }>((tie) => ({
    tree: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 5, arbitrary: jsonScalar(fixtures) },
      { weight: 1, arbitrary: fc.array(tie("tree"), { maxLength: 4 }) },
      {
        weight: 1,
        arbitrary: fc.dictionary(
          fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...HOSTILE_KEYS)),
          tie("tree"),
          {
            maxKeys: 4,
          },
        ),
      },
    ),
  })).tree;

// ---- plausible fields -------------------------------------------------------------------------

const TEST_CARDS = [
  "4242424242424242",
  "4000000000000002",
  "4000000000000010",
  "4000000000000069",
  "4000000000000077",
  "4000000000000101",
  "4000000000003220",
  "4000000000000531",
  "4000000000002206",
  "4000000000001216",
  "4000000000006009",
  "378282246310005",
];

const future = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

/** Ids a body may name: payment sources (cards and customer tokens), and every fixture id. */
interface BodyIds {
  sources: readonly string[];
  all: readonly string[];
}

/** Mostly a valid value, so requests get past validation into the code behind it; now and then not. */
function mostly<T extends Tree>(valid: readonly T[], wrong: readonly Tree[]): fc.Arbitrary<Tree> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...valid) },
    { weight: 1, arbitrary: fc.constantFrom(...wrong) },
  );
}

/** Values a field of this name takes, for any route: mostly valid ones, some wrong. */
function plausible(field: string, ids: BodyIds): fc.Arbitrary<Tree> {
  const amount = mostly(
    ["10.00", "1.00", "0.01", "5", "0"],
    ["999999999999.99", "10.005", "-1", new RawNumber("1e2")],
  );
  const sources = ids.sources.length > 0 ? ids.sources : ["card_x"];
  const byName: Record<string, fc.Arbitrary<Tree>> = {
    name: mostly(["Order"], ["", "x".repeat(81)]),
    amount,
    capture_amount: amount,
    discount_amount: amount,
    currency: mostly(["USD", "EUR", "JPY", "KWD", "usd"], ["XAU", "XXX", "US"]),
    source: mostly(sources, ["card_x", "", "gway_req_e30=", "tok_01ARZ3NDEKTSV4RRFFQ69G5FAV"]),
    customer_id: mostly(ids.all.length > 0 ? ids.all : ["cust_x"], ["cust_x", ""]),
    token_id: mostly(ids.all.length > 0 ? ids.all : ["tok_x"], ["tok_x", ""]),
    number: mostly(TEST_CARDS, ["4242 4242 4242 4241", "", "42"]),
    exp_month: mostly(["12", "1", new RawNumber("12")], ["13", "0", "1.0"]),
    exp_year: mostly(["2099", "30", new RawNumber("2099")], ["1999", "20999"]),
    cvc2: mostly(["123", "1234"], ["12", "abc"]),
    cvc: mostly(["123"], ["1"]),
    incremental: mostly([true, "true", "false"], ["yes", "2"]),
    verify: mostly([true, "true", "false"], ["maybe"]),
    set_default: mostly([true, "false"], ["no"]),
    auto_capture_at: mostly([future(1), future(6)], [future(8), future(-1), "not a date", "2099-02-30"]),
    reason: mostly(["customer_request", "duplicate", "fraud"], ["other"]),
    result: mostly(["approved", "failed"], ["maybe"]),
    webhook_url: mostly(
      ["http://127.0.0.1:9/hook", "https://93.184.215.14/x", ""],
      ["http://user:pw@127.0.0.1/", "javascript:alert(1)", "http://[::1"],
    ),
    email: mostly(["a@example.com", ""], ["not an email"]),
    first_name: fc.string({ maxLength: 120 }),
    metadata: fc.dictionary(
      fc.oneof(fc.string({ maxLength: 45 }), fc.constantFrom(...HOSTILE_KEYS)),
      jsonScalar([]),
      {
        maxKeys: 55,
      },
    ),
    details: fc.array(
      fc.record({ name: mostly(["Tea"], [""]), amount, quantity: mostly(["2", "1"], ["0", "x"]) }),
      { maxLength: 3 },
    ),
    expand: fc.oneof(
      fc.constantFrom("customer", "transaction", "tokens", "customer.tokens", "x"),
      fc.array(fc.constantFrom("customer", "transaction", "x"), { maxLength: 3 }),
    ),
    limit: mostly(["0", "5", "100", new RawNumber("0")], ["101", "-1"]),
  };
  return byName[field] ?? jsonScalar(ids.all);
}

const FIELDS = [
  "name",
  "amount",
  "capture_amount",
  "currency",
  "source",
  "customer_id",
  "token_id",
  "number",
  "exp_month",
  "exp_year",
  "cvc2",
  "cvc",
  "incremental",
  "verify",
  "set_default",
  "auto_capture_at",
  "reason",
  "result",
  "webhook_url",
  "email",
  "first_name",
  "metadata",
  "details",
  "expand",
  "limit",
  "shipping",
  "tax",
  "device",
];

/** Bodies that reach a route's deeper code: a known-good shape per route, then mutated. */
const TEMPLATES: Readonly<Record<string, readonly string[]>> = {
  "POST /customers": ["first_name", "email", "currency", "metadata"],
  "PUT /customers/{customer_id}": ["first_name", "currency"],
  "POST /invoices": ["name", "amount", "currency", "customer_id", "details", "webhook_url"],
  "PUT /invoices/{invoice_id}": ["name", "amount", "currency"],
  "POST /cards": ["number", "exp_month", "exp_year", "cvc2"],
  "POST /customers/{customer_id}/tokens": ["source", "verify", "set_default"],
  "PUT /customers/{customer_id}/tokens/{token_id}": ["source"],
  "POST /invoices/{invoice_id}/authorize": ["source", "incremental", "auto_capture_at", "capture_amount"],
  "POST /invoices/{invoice_id}/capture": ["source", "amount"],
  "POST /invoices/{invoice_id}/increment_authorization": ["amount"],
  "POST /invoices/{invoice_id}/refunds": ["amount", "reason"],
  "POST /transactions/{transaction_id}/refunds": ["amount", "reason"],
  "POST /3ds/{token}": ["result"],
  "PUT /projects/{project_id}": ["webhook_url"],
};

function fieldsBody(routeKey: string, ids: BodyIds): fc.Arbitrary<Tree> {
  const template = TEMPLATES[routeKey] ?? [];
  const anyFields = fc.subarray(FIELDS, { maxLength: 6 });
  const names =
    template.length === 0
      ? anyFields
      : fc.oneof({ weight: 3, arbitrary: fc.subarray([...template]) }, { weight: 2, arbitrary: anyFields });
  return names.chain((chosen) =>
    fc
      .tuple(
        ...chosen.map((field) =>
          fc.oneof(
            { weight: 8, arbitrary: plausible(field, ids) },
            { weight: 1, arbitrary: anyTree(ids.all) },
          ),
        ),
      )
      .chain((values) =>
        fc
          .dictionary(fc.constantFrom(...HOSTILE_KEYS, "unknown_field", "order_id"), anyTree(ids.all), {
            maxKeys: 2,
          })
          .map((extra) => ({
            ...Object.fromEntries(chosen.map((field, i) => [field, values[i] as Tree])),
            ...extra,
          })),
      ),
  );
}

// ---- bodies -----------------------------------------------------------------------------------

const CONTENT_TYPES = [
  "text/plain",
  "",
  "application/xml",
  "multipart/form-data; boundary=x",
  "application/octet-stream",
  "application/json; charset=utf-16",
  "application/vnd.api+json",
  "APPLICATION/JSON",
];

function bodyRecipe(routeKey: string, ids: BodyIds): fc.Arbitrary<BodyRecipe> {
  const tree = fieldsBody(routeKey, ids);
  return fc.oneof(
    {
      weight: 10,
      arbitrary: tree.map((t): BodyRecipe => ({ kind: "json", tree: t, contentType: "application/json" })),
    },
    {
      weight: 6,
      arbitrary: fc.tuple(tree, fc.constantFrom("indices", "brackets", "repeat" as const), fc.boolean()).map(
        ([t, arrayFormat, dots]): BodyRecipe => ({
          kind: "form",
          tree: t,
          contentType: "application/x-www-form-urlencoded",
          arrayFormat,
          dots,
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(anyTree(ids.all), fc.constantFrom(...CONTENT_TYPES))
        .map(([t, contentType]): BodyRecipe => ({ kind: "json", tree: t, contentType })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(tree, fc.nat({ max: 200 }))
        .map(([t, keep]): BodyRecipe => ({ kind: "truncated-json", tree: t, keep })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString("hex")),
          fc.constantFrom(
            "application/json",
            "application/x-www-form-urlencoded",
            "text/plain",
            ...CONTENT_TYPES,
          ),
        )
        .map(([hex, contentType]): BodyRecipe => ({ kind: "bytes", hex, contentType })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.string({ maxLength: 80 }),
          fc.constantFrom("application/json", "application/x-www-form-urlencoded"),
        )
        .map(([text, contentType]): BodyRecipe => ({ kind: "text", text, contentType })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.oneof(fc.integer({ min: 1, max: INPUT_LIMITS.depth + 2 }), fc.constantFrom(100, 4000, 20_000)),
          fc.constantFrom("json-object", "json-array", "form-brackets", "form-dots" as const),
        )
        .map(([levels, style]): BodyRecipe => ({ kind: "deep", levels, style })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom(INPUT_LIMITS.fields, INPUT_LIMITS.fields + 1, 50_000),
          fc.constantFrom("json", "form" as const),
        )
        .map(([count, style]): BodyRecipe => ({ kind: "many-fields", count, style })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom(64 * 1024, INPUT_LIMITS.bodyBytes - 100, INPUT_LIMITS.bodyBytes + 1),
          fc.constantFrom("application/json", "application/x-www-form-urlencoded"),
        )
        .map(([bytes, contentType]): BodyRecipe => ({ kind: "large", bytes, contentType })),
    },
  );
}

function treeJson(tree: Tree): string {
  if (tree instanceof RawNumber) return tree.text;
  if (Array.isArray(tree)) return `[${tree.map(treeJson).join(",")}]`;
  if (tree !== null && typeof tree === "object") {
    return `{${Object.entries(tree)
      .map(([key, value]) => `${JSON.stringify(key)}:${treeJson(value)}`)
      .join(",")}}`;
  }
  return JSON.stringify(tree);
}

/** The tree as `qs` encodes it: raw numbers as their text, `null` as an empty value. */
function formValue(tree: Tree): unknown {
  if (tree instanceof RawNumber) return tree.text;
  if (tree === null) return "";
  if (Array.isArray(tree)) return tree.map(formValue);
  if (typeof tree === "object")
    return Object.fromEntries(Object.entries(tree).map(([k, v]) => [k, formValue(v)]));
  return tree;
}

/** The bytes and content type of a body recipe. */
export function renderBody(recipe: BodyRecipe): { bytes: Buffer; contentType: string } {
  switch (recipe.kind) {
    case "json":
      return { bytes: Buffer.from(treeJson(recipe.tree)), contentType: recipe.contentType };
    case "form": {
      const text = qs.stringify(formValue(recipe.tree), {
        arrayFormat: recipe.arrayFormat,
        allowDots: recipe.dots,
      });
      return { bytes: Buffer.from(text), contentType: recipe.contentType };
    }
    case "text":
      return { bytes: Buffer.from(recipe.text), contentType: recipe.contentType };
    case "bytes":
      return { bytes: Buffer.from(recipe.hex, "hex"), contentType: recipe.contentType };
    case "truncated-json": {
      const text = treeJson(recipe.tree);
      return {
        bytes: Buffer.from(text.slice(0, Math.min(recipe.keep, text.length - 1))),
        contentType: "application/json",
      };
    }
    case "deep":
      return deepBody(recipe.levels, recipe.style);
    case "many-fields":
      return recipe.style === "json"
        ? {
            bytes: Buffer.from(
              `{${Array.from({ length: recipe.count }, (_, i) => `"k${i}":"v"`).join(",")}}`,
            ),
            contentType: "application/json",
          }
        : {
            bytes: Buffer.from(Array.from({ length: recipe.count }, (_, i) => `k${i}=v`).join("&")),
            contentType: "application/x-www-form-urlencoded",
          };
    case "large": {
      const filler = "x".repeat(recipe.bytes);
      const text = recipe.contentType === "application/json" ? `{"name":"${filler}"}` : `name=${filler}`;
      return { bytes: Buffer.from(text), contentType: recipe.contentType };
    }
  }
}

function deepBody(levels: number, style: "json-object" | "json-array" | "form-brackets" | "form-dots") {
  switch (style) {
    case "json-object":
      return {
        bytes: Buffer.from(`${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`),
        contentType: "application/json",
      };
    case "json-array":
      return {
        bytes: Buffer.from(`{"a":${"[".repeat(levels)}${"]".repeat(levels)}}`),
        contentType: "application/json",
      };
    case "form-brackets":
      return {
        bytes: Buffer.from(`a${"[a]".repeat(levels)}=1`),
        contentType: "application/x-www-form-urlencoded",
      };
    case "form-dots":
      return {
        bytes: Buffer.from(`a${".a".repeat(levels)}=1`),
        contentType: "application/x-www-form-urlencoded",
      };
  }
}

// ---- query strings ----------------------------------------------------------------------------

function queryString(fixtureIds: readonly string[]): fc.Arbitrary<string> {
  const cursor = fc.oneof(
    fixtureIds.length > 0 ? fc.constantFrom(...fixtureIds) : fc.constant("cust_x"),
    fc.constantFrom("", "cust_", "x".repeat(3000), "cust_01ARZ3NDEKTSV4RRFFQ69G5FAV", "%ff", "null"),
  );
  const pair = fc.oneof(
    fc.tuple(fc.constantFrom("limit"), fc.constantFrom("0", "1", "10", "100", "101", "-5", "1e2", "abc", "")),
    fc.tuple(fc.constantFrom("order"), fc.constantFrom("asc", "desc", "up", "")),
    fc.tuple(fc.constantFrom("start_after", "end_before"), cursor),
    fc.tuple(
      fc.constantFrom("expand", "expand[]"),
      fc.constantFrom("customer", "transaction", "tokens", "a,b", ""),
    ),
    fc.tuple(
      fc.constantFrom("filter", "legacyrequest", "project_id", "x-Authorization"),
      fc.string({ maxLength: 20 }),
    ),
    fc.tuple(
      fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...HOSTILE_KEYS)),
      fc.string({ maxLength: 20 }),
    ),
  );
  const encodedPairs = fc
    .array(pair, { maxLength: 6 })
    .map((pairs) => pairs.map(([key, value]) => `${percentEncode(key)}=${percentEncode(value)}`).join("&"));
  return fc.oneof(
    { weight: 60, arbitrary: fc.constant("") },
    { weight: 30, arbitrary: encodedPairs },
    { weight: 1, arbitrary: fc.constant("filter=&limit=0&end_before=&start_after=") },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(INPUT_LIMITS.depth, 50, 2000)
        .map((levels) => `expand${"[a]".repeat(levels)}=x`),
    },
    // More parameters than the field limit make a query string over the local server's 16 KiB.
    { weight: 1, arbitrary: fc.constantFrom(50, 2000).map((n) => "x=1&".repeat(n)) },
    { weight: 1, arbitrary: fc.constantFrom("%zz", "a=%ff%fe", "a=%", "&&&", "?", "a[=1", "a]=1", "=1") },
    { weight: 1, arbitrary: fc.constant(`q=${"a".repeat(17_000)}`) },
  );
}

// ---- credentials and headers ------------------------------------------------------------------

function credential(): fc.Arbitrary<Credential> {
  const environment = fc.constantFrom<Environment>("sandbox", "sandbox", "live");
  return fc.oneof(
    { weight: 30, arbitrary: environment.map((e): Credential => ({ kind: "private", environment: e })) },
    { weight: 3, arbitrary: environment.map((e): Credential => ({ kind: "public", environment: e })) },
    { weight: 1, arbitrary: environment.map((e): Credential => ({ kind: "wrong-key", environment: e })) },
    { weight: 1, arbitrary: fc.constant<Credential>({ kind: "none" }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<Credential>(
        { kind: "bad", what: "garbage", authorization: "Basic !!!not-base64!!!" },
        { kind: "bad", what: "bearer", authorization: "Bearer abc.def" },
        { kind: "bad", what: "empty basic", authorization: "Basic " },
        {
          kind: "bad",
          what: "unknown project",
          authorization: basicAuthorization("proj_01ARZ3NDEKTSV4RRFFQ69G5FAV", "k"),
        },
        { kind: "bad", what: "not an id", authorization: basicAuthorization("x".repeat(3000), "") },
        { kind: "bad", what: "colons", authorization: basicAuthorization("::", "::") },
        {
          kind: "bad",
          what: "latin1 bytes",
          authorization: `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x80]).toString("base64")}`,
        },
        { kind: "bad", what: "long", authorization: `Basic ${"QUFB".repeat(2000)}` },
      ),
    },
  );
}

function headers(method: string): fc.Arbitrary<Record<string, string>> {
  const idempotencyKey = fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constantFrom("k1", "k2", "cap-42") },
    { weight: 1, arbitrary: fc.constantFrom("", "   ", "x".repeat(255), "x".repeat(256), "x".repeat(4000)) },
    { weight: 1, arbitrary: headerText(40) },
  );
  const odd = fc.oneof(
    { weight: 100, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.constant({ "x-forwarded-for": "::1, 999.1.1.1, <script>" }) },
    { weight: 1, arbitrary: fc.constant({ "x-big": "b".repeat(17_000) }) },
    { weight: 1, arbitrary: fc.constant({ accept: "text/html", "api-version": "1.3.0.0" }) },
  );
  return fc.tuple(method === "POST" ? idempotencyKey : fc.constant(undefined), odd).map(([key, extra]) => ({
    ...extra,
    ...(key === undefined ? {} : { "idempotency-key": key }),
  }));
}

// ---- paths ------------------------------------------------------------------------------------

/** A path segment as sent, and the fixture it names, if any. */
interface PathValue {
  segment: string;
  label?: string;
}

const MALFORMED_SEGMENTS = [
  "A".repeat(2100),
  "..",
  "%2F",
  "%00",
  "%ff",
  "%zz",
  "%F0%9F%99%82",
  "null",
  "0",
  "%20x",
];

function pathValue(name: string, fixtures: readonly Fixture[]): fc.Arbitrary<PathValue> {
  const declared = isDeclaredPathParameter(name) ? wellFormed(name) : fc.string({ maxLength: 30 });
  const others: fc.WeightedArbitrary<PathValue>[] = [
    { weight: 2, arbitrary: declared.map((value) => ({ segment: percentEncode(value) })) },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_SEGMENTS).map((segment) => ({ segment })) },
    {
      weight: 1,
      arbitrary: fc
        .string({ unit: "grapheme", minLength: 1, maxLength: 40 })
        .map((text) => ({ segment: percentEncode(text) })),
    },
  ];
  if (fixtures.length === 0) return fc.oneof(...others);
  const existing = fc
    .constantFrom(...fixtures)
    .map((fixture) => ({ segment: percentEncode(fixture.id), label: `${name}=${fixture.role}` }));
  return fc.oneof({ weight: 12, arbitrary: existing }, ...others);
}

// ---- whole requests ---------------------------------------------------------------------------

function routeRequest(route: RouteDeclaration, fixtures: Fixtures): fc.Arbitrary<FuzzRequest> {
  const routeKey = `${route.method} ${route.path}`;
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
  return credential()
    .chain((who) => {
      const environment: Environment = "environment" in who ? who.environment : "sandbox";
      const own = fixtures[environment];
      const other = fixtures[environment === "sandbox" ? "live" : "sandbox"];
      const ids = own.all.map((fixture) => fixture.id);
      // GET and DELETE get a body now and then (one client library sends JSON on DELETE).
      const bodyWeight = route.method === "POST" || route.method === "PUT" ? 8 : 1;
      const noBodyWeight = route.method === "POST" || route.method === "PUT" ? 1 : 7;
      return fc.record({
        who: fc.constant(who),
        method: fc.oneof(
          { weight: 60, arbitrary: fc.constant(route.method) },
          { weight: 1, arbitrary: fc.constantFrom("PATCH", "OPTIONS", "DELETE", "PUT") },
        ),
        segments: fc.tuple(
          ...names.map((name) =>
            fc.oneof(
              { weight: 12, arbitrary: pathValue(name, own.byParameter[name] ?? []) },
              { weight: 1, arbitrary: pathValue(name, other.byParameter[name] ?? []) },
            ),
          ),
        ),
        query: queryString(ids),
        headers: headers(route.method),
        body: fc.oneof(
          { weight: noBodyWeight, arbitrary: fc.constant(undefined) },
          { weight: bodyWeight, arbitrary: bodyRecipe(routeKey, { sources: own.sources, all: ids }) },
        ),
      });
    })
    .map(({ who, method, segments, query, headers: extra, body }) => {
      let index = 0;
      let path = route.path.replace(/\{[^}]+\}/g, () => segments[index++]?.segment ?? "");
      // Deleting the campaign's own project would answer every later request 401: a DELETE aimed
      // at it (by its route or a changed method) deletes one of its supervised projects instead.
      const ownProjects = [fixtures.sandbox, fixtures.live].flatMap((environment) =>
        (environment.byParameter.project_id ?? []).map((fixture) => fixture.id),
      );
      const [, projectSegment] = /^\/projects\/([^/?]+)$/.exec(path) ?? [];
      if (method === "DELETE" && projectSegment && ownProjects.map(percentEncode).includes(projectSegment)) {
        const environment = projectSegment.startsWith("test-") ? fixtures.sandbox : fixtures.live;
        const disposable = environment.byParameter.disposable_project_id ?? [];
        path = `/projects/${disposable[segments.length % Math.max(disposable.length, 1)]?.id ?? "proj_none"}`;
      }
      return {
        route: routeKey,
        method,
        target: query ? `${path}?${query}` : path,
        credential: who,
        headers: extra,
        ...(body ? { body } : {}),
        labels: segments.flatMap((segment) => (segment.label ? [segment.label] : [])),
      };
    });
}

function unroutedRequest(): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(
      fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"),
      fc.array(
        fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom(...MALFORMED_SEGMENTS, "customers", "3ds")),
        {
          maxLength: 5,
        },
      ),
      credential(),
    )
    .map(([method, parts, who]) => ({
      route: "unrouted",
      method,
      target: `/${parts.map((part) => (/^%|^\.\.$/.test(part) ? part : percentEncode(part))).join("/")}`,
      credential: who,
      headers: {},
      labels: [],
    }));
}

/** One request of the whole API: every route of the topology alike, and a few no route matches. */
export function anyRequest(fixtures: Fixtures): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    { weight: 20, arbitrary: fc.constantFrom(...routes).chain((route) => routeRequest(route, fixtures)) },
    { weight: 1, arbitrary: unroutedRequest() },
  );
}
