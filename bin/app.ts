#!/usr/bin/env node
/**
 * The CDK app: one stack per stage. `cdk deploy -c stage=<name>` deploys a fully isolated stack
 * named `PaymentApi-<name>`; `prod` and `staging` are persistent, any other name is a sandbox.
 */
import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { PaymentStack, validateStage } from "../lib/payment-stack.ts";

const app = new App();
const stage = validateStage(app.node.tryGetContext("stage"));

// The CLI fills these from the current credentials; without them the stack is environment-agnostic.
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;

new PaymentStack(app, `PaymentApi-${stage}`, {
  stage,
  env: account || region ? { account, region } : undefined,
});

// cdk-nag 3 is a policy validation plugin: an unacknowledged finding fails the synth.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
