import { Stack } from "aws-cdk-lib";
import type { IConstruct } from "constructs";

/**
 * How cdk-nag writes `value` in a finding of a resource of `scope`'s stack, e.g. the `<Table.Arn>/index/*`
 * of `AwsSolutions-IAM5[Resource::<Table.Arn>/index/*]`: the value resolved in that stack, a `Ref`
 * written `<Name>`, an `Fn::GetAtt` `<Id.Attribute>`, an `Fn::Join` joined (as cdk-nag's own
 * `flattenCfnReference`, which it does not export). Acknowledgements are exact ids, so they are
 * derived from the value granted instead of written by hand: `<AWS::Region>` for an
 * environment-agnostic stack, the region itself once `cdk synth` knows it.
 *
 * Only values of `scope`'s own stack are rendered as cdk-nag will see them: a value of another stack
 * becomes a parameter during synthesis, under a name not known yet. Stacks therefore pass each other
 * values through parameters of their own (see `RouteStack`).
 */
export function nagRendering(scope: IConstruct, value: string): string {
  return flatten(Stack.of(scope).resolve(value));
}

function flatten(node: unknown): string {
  if (typeof node === "string") return node;
  if (node && typeof node === "object") {
    if ("Ref" in node && typeof node.Ref === "string") return `<${node.Ref}>`;
    if ("Fn::GetAtt" in node && Array.isArray(node["Fn::GetAtt"])) {
      const [resource, attribute] = node["Fn::GetAtt"] as unknown[];
      return `<${flatten(resource)}.${flatten(attribute)}>`;
    }
    if ("Fn::Join" in node && Array.isArray(node["Fn::Join"])) {
      const [delimiter, items] = node["Fn::Join"] as [string, unknown[]];
      return items.map(flatten).join(delimiter);
    }
  }
  throw new Error(`No cdk-nag rendering is known for ${JSON.stringify(node)}`);
}
