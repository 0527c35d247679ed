import { errorTypeName, type InvalidField, validationFailed } from "../http/errors.ts";
import * as z from "./zod.ts";

/** Fields whose keys are the merchant's own (their path ends at the field in `error_type`). */
const DICTIONARIES = new Set(["metadata", "gateway_data", "external_fraud_tools"]);

/**
 * Validates request input against a schema. A failure is a 400 `request.validation.*` naming every
 * bad field by its path as the merchant wrote it (`shipping.zip`, `details[2].name`, `metadata.k`).
 */
export function parseInput<S extends z.core.$ZodType>(schema: S, input: unknown): z.output<S> {
  const result = z.safeParse(schema, input);
  if (result.success) return result.data;
  const fields: InvalidField[] = result.error.issues.map((issue) => ({
    name: fieldPath(issue.path),
    message: issue.message,
  }));
  const first = result.error.issues[0] as z.core.$ZodIssue;
  // Zod leaves `input` out of its issues, so "missing" is read from the input itself.
  const missing = first.code === "invalid_type" && valueAt(input, first.path) === undefined;
  return throwValidation(missing, first.path, fields);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const segment of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function throwValidation(missing: boolean, path: PropertyKey[], fields: InvalidField[]): never {
  const dictionary = path.findIndex((segment) => typeof segment === "string" && DICTIONARIES.has(segment));
  const named = dictionary >= 0 ? path.slice(0, dictionary + 1) : path;
  const what = `${missing ? "missing" : "invalid"}-${errorTypeName(fieldPath(named)) || "body"}`;
  throw validationFailed(what, fields);
}

export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out;
}
