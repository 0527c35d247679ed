import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, RemovalPolicy, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ApiFunction, type ApiFunctionProps } from "../../lib/api-function.ts";
import { bundleSize, esmRequireBanner } from "../../lib/bundling.ts";
import { openApiDocument as generatedDocument } from "../../lib/contract/document.ts";
import { fallbackRoute, handlerEntry } from "../../lib/topology.ts";
import { OPENAPI_DOCUMENT_FILE, openApiDocument } from "../../shared/docs/openapi.ts";
import { BROWSER_ASSETS } from "../../shared/http/assets.ts";

const SKIP_BUNDLING = { "aws:cdk:bundling-stacks": [] };

describe("ApiFunction", () => {
  it("keeps the caller's environment variables next to its own", () => {
    const stack = new Stack(
      new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false }),
      "Test",
    );

    new ApiFunction(stack, "NotFound", {
      handler: fallbackRoute.handler,
      environment: { STAGE: "test", FEATURE: "on" },
      logRemovalPolicy: RemovalPolicy.DESTROY,
    });

    Template.fromStack(stack).hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: { STAGE: "test", FEATURE: "on", NODE_OPTIONS: "--enable-source-maps" } },
    });
  });

  it("refuses a caller's variable that would replace one of its own instead of dropping either", () => {
    const stack = new Stack(
      new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false }),
      "Test",
    );

    const create = () =>
      new ApiFunction(stack, "NotFound", {
        handler: fallbackRoute.handler,
        environment: { NODE_OPTIONS: "--max-old-space-size=256" },
        logRemovalPolicy: RemovalPolicy.DESTROY,
      });

    expect(create).toThrow(/NODE_OPTIONS/);
  });

  it("lets the caller change memory and timeout, but not what it fixes", () => {
    const stack = new Stack(
      new App({ context: SKIP_BUNDLING, builtinCloudFormationValidation: false }),
      "Test",
    );

    new ApiFunction(stack, "NotFound", {
      handler: fallbackRoute.handler,
      memorySize: 1024,
      logRemovalPolicy: RemovalPolicy.RETAIN,
    });

    const template = Template.fromStack(stack);
    template.hasResourceProperties("AWS::Lambda::Function", {
      MemorySize: 1024,
      Timeout: 10,
      Runtime: "nodejs22.x",
      Architectures: ["arm64"],
    });
    template.hasResource("AWS::Logs::LogGroup", { DeletionPolicy: "Retain" });
  });
});

describe("bundling", () => {
  const outdir = mkdtempSync(join(tmpdir(), "payment-api-bundle-"));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  /** Synthesizes one function, bundled as a deployment bundles it: its stack and its bundle's folder. */
  function bundled(name: string, props: Omit<ApiFunctionProps, "logRemovalPolicy">) {
    const app = new App({ outdir: join(outdir, name), builtinCloudFormationValidation: false });
    const stack = new Stack(app, name);
    new ApiFunction(stack, name, { ...props, logRemovalPolicy: RemovalPolicy.DESTROY });
    const assembly = app.synth();
    const [assetDir] = readdirSync(assembly.directory).filter((entry) => entry.startsWith("asset."));
    return { stack, root: join(assembly.directory, assetDir as string) };
  }

  it("deploys exactly the bytes bundleSize reports: an ESM bundle with the require banner and a source map", async () => {
    const { root } = bundled("NotFound", { handler: fallbackRoute.handler });
    const files = readdirSync(root).sort();
    const bundle = join(root, "index.mjs");

    expect(files).toEqual(["index.mjs", "index.mjs.map"]);
    expect(readFileSync(bundle, "utf8").startsWith(esmRequireBanner)).toBe(true);
    expect(await bundleSize(handlerEntry(fallbackRoute.handler))).toBe(statSync(bundle).size);
  }, 60_000);

  it("builds the browser scripts into the bundle of the function that serves them, and tells it where", async () => {
    const { stack, root } = bundled("AssetsGet", { handler: "assets/get", browserAssets: true });

    expect(readdirSync(join(root, "browser")).sort()).toEqual(Object.keys(BROWSER_ASSETS).sort());
    expect(readFileSync(join(root, "browser", "payments.js"), "utf8")).toContain("makeCardPayment");
    // The handler's own bundle carries no browser code: it reads the files.
    expect(readFileSync(join(root, "index.mjs"), "utf8")).not.toContain("makeCardPayment");
    Template.fromStack(stack).hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: { BROWSER_ASSETS_DIR: "/var/task/browser" } },
    });
  }, 60_000);

  it("generates the OpenAPI document into the bundle of the function that serves it, which serves it with its API's address", async () => {
    const { root } = bundled("DocsOpenapi", { handler: "docs/openapi", apiDocument: true });
    vi.stubEnv("LAMBDA_TASK_ROOT", root);
    try {
      expect(readdirSync(root)).toContain(OPENAPI_DOCUMENT_FILE);
      expect(await openApiDocument("https://api.example.com")).toEqual(
        generatedDocument("https://api.example.com"),
      );
    } finally {
      vi.unstubAllEnvs();
    }
    // The handler's own bundle carries neither the contract nor its generator: it reads the file.
    const bundle = readFileSync(join(root, "index.mjs"), "utf8");
    expect(bundle).not.toContain("Create a customer");
    expect(bundle).not.toContain("draft-2020-12");
  }, 60_000);
});
