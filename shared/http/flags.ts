import { invalidField } from "./errors.ts";
import type { Input } from "./input.ts";

/**
 * A yes/no parameter as client libraries send it, in the query string or the body: `true`, `True`
 * or `1` mean yes; absent, empty, a bare key without `=`, `null`, `None`, `false`, `False` or `0`
 * mean no (one library writes its language's literals, another sends `null` for anything unset).
 * Anything else is a 400 naming the parameter.
 */
const YES = new Set(["true", "True", "1"]);
const NO = new Set(["", "null", "None", "false", "False", "0"]);

export function readFlag(input: { query: Input; body: Input }, name: string): boolean {
  const value = input.body[name] ?? input.query[name];
  if (value === undefined || value === null || value === false) return false;
  if (value === true) return true;
  if (typeof value === "string" && YES.has(value)) return true;
  if (typeof value === "string" && NO.has(value)) return false;
  throw invalidField(name, "must be true or false");
}
