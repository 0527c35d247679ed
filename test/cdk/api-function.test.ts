import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, RemovalPolicy, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { afterAll, describe, expect, it } from "vitest";
import { ApiFunction } from "../../lib/api-function.ts";
import { bundleSize, esmRequireBanner } from "../../lib/bundling.ts";
import { fallbackRoute, handlerEntry } from "../../lib/topology.ts";
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

  it("deploys exactly the bytes bundleSize reports: an ESM bundle with the require banner and a source map", async () => {
    const app = new App({ outdir, builtinCloudFormationValidation: false });
    const stack = new Stack(app, "Bundled");
    new ApiFunction(stack, "NotFound", {
      handler: fallbackRoute.handler,
      logRemovalPolicy: RemovalPolicy.DESTROY,
    });

    const assembly = app.synth();
    const [assetDir] = readdirSync(assembly.directory).filter((name) => name.startsWith("asset."));
    const files = readdirSync(join(assembly.directory, assetDir as string)).sort();
    const bundle = join(assembly.directory, assetDir as string, "index.mjs");

    expect(files).toEqual(["index.mjs", "index.mjs.map"]);
    expect(readFileSync(bundle, "utf8").startsWith(esmRequireBanner)).toBe(true);
    expect(await bundleSize(handlerEntry(fallbackRoute.handler))).toBe(statSync(bundle).size);
  }, 60_000);

  it("builds the browser scripts into the bundle of the function that serves them, and tells it where", async () => {
    const app = new App({ outdir: join(outdir, "assets"), builtinCloudFormationValidation: false });
    const stack = new Stack(app, "Assets");
    new ApiFunction(stack, "AssetsGet", {
      handler: "assets/get",
      browserAssets: true,
      logRemovalPolicy: RemovalPolicy.DESTROY,
    });

    const assembly = app.synth();
    const [assetDir] = readdirSync(assembly.directory).filter((name) => name.startsWith("asset."));
    const root = join(assembly.directory, assetDir as string);

    expect(readdirSync(join(root, "browser")).sort()).toEqual(Object.keys(BROWSER_ASSETS).sort());
    expect(readFileSync(join(root, "browser", "payments.js"), "utf8")).toContain("makeCardPayment");
    // The handler's own bundle carries no browser code: it reads the files.
    expect(readFileSync(join(root, "index.mjs"), "utf8")).not.toContain("makeCardPayment");
    Template.fromStack(stack).hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: { BROWSER_ASSETS_DIR: "/var/task/browser" } },
    });
  }, 60_000);
});
