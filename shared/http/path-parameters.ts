import {
  COUPON_ID_PATTERN,
  ENVIRONMENT_PROJECT_ID_PATTERN,
  ID_PREFIXES,
  type IdKind,
  idPattern,
  PLAN_ID_PATTERN,
  ULID_PATTERN,
} from "../ids.ts";

/**
 * The shape of every path parameter a route may name (`{name}` in `lib/topology.ts`). The HTTP core
 * checks each parameter against its shape before any handler runs, the same way on every route, so
 * no value that cannot be an id reaches a table key (a 2,100-character 3DS token made a partition
 * key DynamoDB refuses: a 500). A malformed value answers the 404 the route gives an unknown id,
 * `resource.<resource>.not-found`: nothing can exist under it. A unit test holds every route of the
 * topology to this table, so a new route cannot forget its parameters.
 */
export interface PathParameterShape {
  /** Anchored: the whole value must match. */
  pattern: RegExp;
  /** The `<resource>` of the 404 answered for a malformed value. */
  resource: string;
}

const id = (kind: IdKind, resource: string = kind): PathParameterShape => ({
  pattern: idPattern(kind),
  resource,
});

/** Lower-case letters, digits and dashes: the gateway names of connectors (`sandbox`, …). */
const GATEWAY_NAME = "[a-z0-9-]{1,40}";

export const PATH_PARAMETERS = {
  customer_id: id("customer"),
  token_id: id("token"),
  card_id: id("card"),
  invoice_id: id("invoice"),
  transaction_id: id("transaction"),
  refund_id: id("refund"),
  event_id: id("event"),
  activity_id: id("activity"),
  certificate_id: id("applepayCertificate", "applepay-certificate"),
  subscription_id: id("subscription"),
  addon_id: id("addon"),
  discount_id: id("discount"),
  payout_id: id("payout"),
  product_id: id("product"),
  export_layout_id: id("exportLayout", "export-layout"),
  export_id: id("export"),
  api_key_id: id("apiKey", "api-key"),
  user_id: id("dashboardUser", "user"),
  /** An export type (`transactions`, `payouts`, `payout_items`); an unknown one answers 404. */
  export_type: { pattern: /^[a-z_]{1,40}$/, resource: "export-type" },
  /** An environment's id: `proj_…` or `test-proj_…`. */
  project_id: { pattern: ENVIRONMENT_PROJECT_ID_PATTERN, resource: "project" },
  /**
   * The 3DS challenge page's token: 24 random bytes in base64url (`randomBytes(24)` in
   * `shared/payments/service.ts`), so 32 characters without padding.
   */
  token: { pattern: /^[A-Za-z0-9_-]{32}$/, resource: "challenge" },
  /** Plans and coupons have merchant-chosen ids. */
  plan_id: { pattern: PLAN_ID_PATTERN, resource: "plan" },
  coupon_id: { pattern: COUPON_ID_PATTERN, resource: "coupon" },
  /** A gateway configuration, or the native APM form `<gateway configuration id>.<gateway name>`. */
  gateway_configuration_id: {
    pattern: new RegExp(`^${ID_PREFIXES.gatewayConfiguration}${ULID_PATTERN}(\\.${GATEWAY_NAME})?$`),
    resource: "gateway-configuration",
  },
  gateway_name: { pattern: new RegExp(`^${GATEWAY_NAME}$`), resource: "gateway" },
  /** A file of the API reference page (`swagger-ui.css`): a name the docs module knows, or a 404. */
  docs_file: { pattern: /^[a-z0-9-]{1,40}(\.[a-z0-9]{1,8}){1,2}$/, resource: "docs-asset" },
  /** A script or style sheet served to browsers (`shared/http/assets.ts`). */
  asset: { pattern: /^[a-z][a-z0-9-]{0,40}\.(js|css)$/, resource: "asset" },
  /** The first 6 to 8 digits of a card number. */
  iin: { pattern: /^[0-9]{6,8}$/, resource: "iin" },
} as const satisfies Record<string, PathParameterShape>;

export type PathParameterName = keyof typeof PATH_PARAMETERS;

export function isDeclaredPathParameter(name: string): name is PathParameterName {
  return Object.hasOwn(PATH_PARAMETERS, name);
}

/**
 * The first parameter whose value does not have its declared shape, with the resource to answer
 * not found; undefined when every value is well formed. A parameter without a declared shape is a
 * programming error (the unit test over `lib/topology.ts` catches it first), never let through.
 */
export function malformedPathParameter(
  parameters: Readonly<Record<string, string | undefined>>,
): { name: string; resource: string } | undefined {
  for (const [name, value] of Object.entries(parameters)) {
    if (!isDeclaredPathParameter(name)) {
      throw new Error(`Path parameter {${name}} has no shape in shared/http/path-parameters.ts.`);
    }
    const shape: PathParameterShape = PATH_PARAMETERS[name];
    if (value === undefined || !shape.pattern.test(value)) return { name, resource: shape.resource };
  }
  return undefined;
}
