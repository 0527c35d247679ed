/**
 * Helpers of the CDK tests: the templates of a stack and of every stack nested in it, read as one,
 * and the lookups the tests make in them.
 */
import { type CfnElement, NestedStack, type Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { expect } from "vitest";
import { functionId } from "../../lib/topology.ts";

// The construct tree and templates are what is under test, not the bundles: skipping bundling
// keeps esbuild from running once per function per stack (NodejsFunction honours this context key).
export const SKIP_BUNDLING = { "aws:cdk:bundling-stacks": [] };

export interface CfnResource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}
export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}
interface TemplateJson {
  Resources: Record<string, CfnResource>;
  [section: string]: unknown;
}

/** `stack` and every stack nested in it, parents before their children. */
export function stacksOf(stack: Stack): Stack[] {
  return [stack, ...stack.node.findAll().filter((construct) => NestedStack.isNestedStack(construct))];
}

/**
 * The resources of `stack` and of every stack nested in it as one template (the root's other
 * sections), each nested stack's parameters replaced by the values its parent passes them: a
 * reference then reads the same wherever the resource lives (the table is `{ Ref: <its logical id> }`
 * in every stack, not `{ Ref: "TableName" }` in a nested one). The app must be synthesized.
 * Logical ids are unique per stack only, so two stacks declaring the same one is an error here.
 */
export function wholeTemplate(stack: Stack): Template {
  const root = Template.fromStack(stack).toJSON() as TemplateJson;
  const resources: Record<string, CfnResource> = { ...root.Resources };
  for (const nested of stacksOf(stack).filter((candidate) => NestedStack.isNestedStack(candidate))) {
    const parent = nested.nestedStackParent;
    if (!parent || !nested.nestedStackResource) throw new Error(`${nested.node.path} has no parent`);
    const stackResource = resources[parent.getLogicalId(nested.nestedStackResource as CfnElement)];
    const parameters = (stackResource?.Properties.Parameters ?? {}) as Record<string, unknown>;
    const template = Template.fromStack(nested).toJSON() as TemplateJson;
    for (const [id, found] of Object.entries(template.Resources)) {
      if (id in resources)
        throw new Error(`Logical id ${id} is declared in ${nested.node.path} and elsewhere`);
      resources[id] = withParameters(found, parameters) as CfnResource;
    }
  }
  return Template.fromJSON({ ...root, Resources: resources });
}

/** `value` with every `{ Ref: <parameter> }` replaced by the parameter's value. */
function withParameters(value: unknown, parameters: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((item) => withParameters(item, parameters));
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    const [first] = entries;
    if (
      entries.length === 1 &&
      first?.[0] === "Ref" &&
      typeof first[1] === "string" &&
      first[1] in parameters
    ) {
      return parameters[first[1]];
    }
    return Object.fromEntries(entries.map(([key, item]) => [key, withParameters(item, parameters)]));
  }
  return value;
}

export function resourcesOf(template: Template, type: string): Record<string, CfnResource> {
  return template.findResources(type) as Record<string, CfnResource>;
}

export function resource(template: Template, logicalId: string): CfnResource {
  const found = (template.toJSON() as TemplateJson).Resources[logicalId];
  if (!found) throw new Error(`No resource ${logicalId} in the template`);
  return found;
}

/** `{ "Fn::GetAtt": [id, attr] }` or `{ Ref: id }` → id. */
export function referencedId(value: unknown): string {
  const reference = value as { Ref?: string; "Fn::GetAtt"?: [string, string] };
  const id = reference.Ref ?? reference["Fn::GetAtt"]?.[0];
  if (!id) throw new Error(`Not a reference: ${JSON.stringify(value)}`);
  return id;
}

/** The logical id CDK gives the function of `handler`: its construct id (`functionId`) plus a hash. */
export function functionLogicalId(template: Template, handler: string): string {
  const pattern = new RegExp(`^${functionId(handler)}[0-9A-F]{8}$`);
  const ids = Object.keys(resourcesOf(template, "AWS::Lambda::Function")).filter((id) => pattern.test(id));
  expect(ids, `functions of handler ${handler}`).toHaveLength(1);
  return ids[0] as string;
}

export function environmentOf(fn: CfnResource): Record<string, unknown> {
  return (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
}

/** Every statement of every policy attached to the role `roleId`. */
export function roleStatements(template: Template, roleId: string): Statement[] {
  return Object.values(resourcesOf(template, "AWS::IAM::Policy"))
    .filter((policy) => (policy.Properties.Roles as unknown[]).some((role) => referencedId(role) === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** Every statement of every policy attached to the function's role. */
export function statementsOf(template: Template, functionLogicalId: string): Statement[] {
  return roleStatements(template, referencedId(resource(template, functionLogicalId).Properties.Role));
}

export const actionsOf = (statements: Statement[]) =>
  statements.flatMap((statement) => [statement.Action].flat());

/**
 * `handler` under another name: `alias("v2", "customers/create")` is `v2/../customers/create`, whose
 * file is `functions/customers/create.ts` and whose function and route group are new (`V2…`). Lets a
 * synthetic topology declare more functions than there are handler files.
 */
export const alias = (prefix: string, handler: string) => `${prefix}/../${handler}`;
