import { join, resolve } from "node:path";
import { Duration, type RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { IKey } from "aws-cdk-lib/aws-kms";
import { Architecture, type Function as LambdaFunction, Runtime, Tracing } from "aws-cdk-lib/aws-lambda";
import {
  type BundlingOptions,
  NodejsFunction,
  type NodejsFunctionProps,
} from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";
import { KEY_USE_PREFIX } from "../shared/db/keys.ts";
import { OPENAPI_DOCUMENT_FILE } from "../shared/docs/openapi.ts";
import { BROWSER_ASSETS_DIR_VARIABLE } from "../shared/http/assets.ts";
import { bundlingEnvironment, nodejsBundling, projectRoot } from "./bundling.ts";
import { nagRendering } from "./nag.ts";
import { type CardVaultAccess, handlerEntry, type TableAccess } from "./topology.ts";

/** What `ApiFunction` fixes for every function is not open to callers. */
type FixedProps =
  | "entry"
  | "handler"
  | "runtime"
  | "architecture"
  | "bundling"
  | "depsLockFilePath"
  | "projectRoot"
  | "tracing"
  | "role"
  | "logGroup"
  | "logRetention"
  | "logRemovalPolicy";

export interface ApiFunctionProps extends Omit<NodejsFunctionProps, FixedProps> {
  /** Handler module under `functions/`, as declared in `lib/topology.ts` (e.g. `customers/create`). */
  handler: string;
  /** The scripts built for browsers go into the bundle, in `browser/` (`lib/browser-assets.ts`). */
  browserAssets?: boolean;
  /** The OpenAPI document goes into the bundle, in `openapi.json` (`lib/contract/build.ts`). */
  apiDocument?: boolean;
  /** What happens to the function's log group when it leaves the stack (follows the stage). */
  logRemovalPolicy: RemovalPolicy;
  /** Package files copied next to the bundle (`swagger-ui-dist/swagger-ui.css`), read at run time. */
  files?: readonly string[];
}

/**
 * A handler of `functions/` as a Lambda function, with the defaults every function shares:
 * Node 22 on arm64, the shared bundling, active tracing, and its own log group with a retention.
 *
 * The role is the function's own and only may write to that log group (instead of the managed
 * `AWSLambdaBasicExecutionRole`, which allows writing to every log group of the account); grants
 * such as `grantTable` add to it.
 */
export class ApiFunction extends NodejsFunction {
  /** Absolute path of the bundled handler file. */
  readonly entry: string;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    const { handler, logRemovalPolicy, environment, files, browserAssets, apiDocument, ...options } = props;
    const entry = resolve(projectRoot, handlerEntry(handler));

    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: logRemovalPolicy,
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal("lambda.amazonaws.com"),
      description: `Runs the ${handler} handler`,
    });
    logGroup.grantWrite(role);

    super(scope, id, {
      memorySize: 512,
      timeout: Duration.seconds(10),
      ...options,
      entry,
      handler: "handler",
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      tracing: Tracing.ACTIVE,
      role,
      logGroup,
      bundling:
        files || browserAssets || apiDocument
          ? withBuildSteps({
              files: files ?? [],
              browserAssets: browserAssets === true,
              apiDocument: apiDocument === true,
            })
          : nodejsBundling,
      depsLockFilePath: join(projectRoot, "package-lock.json"),
      projectRoot,
      environment: mergeEnvironment(
        {
          ...bundlingEnvironment,
          ...(browserAssets ? { [BROWSER_ASSETS_DIR_VARIABLE]: BUNDLED_ASSETS_DIR } : {}),
        },
        environment ?? {},
      ),
    });
    this.entry = entry;

    // cdk-nag findings that cannot be fixed, acknowledged as narrowly as cdk-nag allows.
    Validations.of(this).acknowledge({
      id: "AwsSolutions-L1",
      reason: "Node.js 22 LTS (nodejs22.x) is the runtime pinned by the architecture decisions.",
    });
    Validations.of(role).acknowledge({
      id: "AwsSolutions-IAM5[Resource::*]",
      reason:
        "Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions.",
    });
  }
}

/** Where the browser scripts are in a deployed bundle (Lambda unpacks it in `/var/task`). */
const BUNDLED_ASSETS_DIR = "/var/task/browser";

/**
 * The shared bundling, followed by what some functions need beside their code: `files` (paths under
 * `node_modules`) copied into the bundle's folder, where the function finds them under
 * `LAMBDA_TASK_ROOT`; the browser scripts built into the bundle's `browser/` folder, with the
 * very build the local stack runs (`lib/browser-assets.ts`); and the OpenAPI document, generated
 * into the bundle's folder (`lib/contract/build.ts`, read by `shared/docs/openapi.ts`).
 */
function withBuildSteps(steps: {
  files: readonly string[];
  browserAssets: boolean;
  apiDocument: boolean;
}): BundlingOptions {
  const { files, browserAssets, apiDocument } = steps;
  const tsx = join(projectRoot, "node_modules", ".bin", "tsx");
  const build = join(projectRoot, "lib", "browser-assets.ts");
  const buildDocument = join(projectRoot, "lib", "contract", "build.ts");
  return {
    ...nodejsBundling,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir, outputDir) => [
        ...files.map((file) => `cp "${join(inputDir, "node_modules", file)}" "${outputDir}/"`),
        ...(browserAssets ? [`"${tsx}" "${build}" "${join(outputDir, "browser")}"`] : []),
        ...(apiDocument ? [`"${tsx}" "${buildDocument}" "${join(outputDir, OPENAPI_DOCUMENT_FILE)}"`] : []),
      ],
    },
  };
}

/** The function's own variables plus the caller's; a name both set is an error, not a silent override. */
function mergeEnvironment(
  own: Readonly<Record<string, string>>,
  caller: Readonly<Record<string, string>>,
): Record<string, string> {
  const clashes = Object.keys(caller).filter((name) => name in own);
  if (clashes.length > 0) {
    throw new Error(`ApiFunction sets ${clashes.join(", ")} itself; do not pass it in environment`);
  }
  return { ...own, ...caller };
}

/**
 * Lets `fn` use `table`: read-only (`grantReadData`) or read and write (`grantReadWriteData`),
 * and tells it the table's name in `TABLE_NAME`. `table` is of `fn`'s own stack (the table itself,
 * or its import in a nested stack), so the grant names it as the acknowledgement below does.
 */
export function grantTable(fn: LambdaFunction, table: ITable, access: TableAccess): void {
  if (Stack.of(table) !== Stack.of(fn)) {
    throw new Error(`${fn.node.path}: import ${table.node.path} into the function's own stack to grant it`);
  }
  if (access === "read") table.grantReadData(fn);
  else table.grantReadWriteData(fn);
  fn.addEnvironment("TABLE_NAME", table.tableName);

  if (!fn.role) throw new Error(`${fn.node.path} has no role to grant table access to`);
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagRendering(fn, table.tableArn)}/index/*]`,
    reason:
      "grantReadData/grantReadWriteData also cover the global secondary indexes of the stage's one table, whose ARNs IAM can only name as <table ARN>/index/*.",
  });
}

/**
 * Lets `fn`, which only reads `table`, record when its caller's private key was used
 * (`shared/projects/key-use.ts`): `dynamodb:UpdateItem` alone, and only on the key-use items, the
 * partition keys that start with `key-use#` (`dynamodb:LeadingKeys`). A function that writes the
 * table needs nothing more.
 */
export function grantKeyUse(fn: LambdaFunction, table: ITable): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ["dynamodb:UpdateItem"],
      resources: [table.tableArn],
      conditions: { "ForAllValues:StringLike": { "dynamodb:LeadingKeys": [`${KEY_USE_PREFIX}*`] } },
    }),
  );
}

/** The two KMS keys of the card vault (`shared/cards/vault.ts`). */
export interface CardVaultKeys {
  /** Symmetric: wraps each card secret's data key. */
  encryption: IKey;
  /** HMAC_256: computes card fingerprints. */
  fingerprint: IKey;
}

/** The encryption context every card secret is sealed under (`encryptionContext` in the vault). */
export const CARD_ENCRYPTION_CONTEXT_KEYS = ["card_id", "field", "project_id"] as const;

/**
 * Lets `fn` use the card vault as its route declares, and no more: `seal` may create data keys
 * (kms:GenerateDataKey) and fingerprints (kms:GenerateMac), `open` may only unwrap data keys
 * (kms:Decrypt). Data keys can only be asked for under the vault's encryption context. Tells the
 * function the keys in `CARD_KEY_ID` and (to seal) `CARD_FINGERPRINT_KEY_ID`.
 */
export function grantCardVault(fn: LambdaFunction, keys: CardVaultKeys, access: CardVaultAccess): void {
  fn.addEnvironment("CARD_KEY_ID", keys.encryption.keyArn);
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: [access === "seal" ? "kms:GenerateDataKey" : "kms:Decrypt"],
      resources: [keys.encryption.keyArn],
      conditions: {
        "ForAllValues:StringEquals": { "kms:EncryptionContextKeys": [...CARD_ENCRYPTION_CONTEXT_KEYS] },
        Null: { "kms:EncryptionContextKeys": "false" },
      },
    }),
  );
  if (access === "seal") {
    fn.addEnvironment("CARD_FINGERPRINT_KEY_ID", keys.fingerprint.keyArn);
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ["kms:GenerateMac"], resources: [keys.fingerprint.keyArn] }),
    );
  }
}
