import { validationFailed } from "./errors.ts";
import type { Input } from "./input.ts";

/**
 * `expand` arrives in four shapes: `expand[]=a&expand[]=b`, `expand=a&expand=b`, `expand=a,b`
 * and a JSON array in a body. All give the same set of dotted paths (`customer.tokens`). The Python
 * client writes an `expand` it was not given as its literal `None`: nothing to expand.
 */
export function readExpand(input: { query: Input; body: Input }, allowed: readonly string[]): Set<string> {
  const paths = new Set<string>();
  for (const source of [input.query.expand, input.body.expand]) {
    for (const value of Array.isArray(source) ? source : [source]) {
      if (value === undefined || value === "None") continue;
      if (typeof value !== "string") {
        throw validationFailed("invalid-expand", [
          { name: "expand", message: "must be a list of field names" },
        ]);
      }
      for (const path of value.split(",")) if (path.trim()) paths.add(path.trim());
    }
  }
  const unknown = [...paths].filter((path) => !allowed.includes(path));
  if (unknown.length > 0) {
    throw validationFailed(
      "invalid-expand",
      unknown.map(() => ({
        name: "expand",
        message: `can expand ${allowed.map((path) => `"${path}"`).join(", ") || "nothing"} here`,
      })),
      `Cannot expand ${unknown.join(", ")}: this resource can expand ${allowed.join(", ") || "nothing"}.`,
    );
  }
  return paths;
}
