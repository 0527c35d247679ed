import type { InvalidField } from "../http/errors.ts";
import * as z from "../validation/zod.ts";
import type { NativeApmParameter } from "./connector.ts";

/**
 * The values a customer gives for a native APM step, checked against the parameters the step asks
 * for (the configuration's `native_apm_config` for the first step, then what the provider asked):
 * every unexpected, missing, mistyped or wrongly sized value is named by its parameter key, as the
 * client libraries show it beside the field it belongs to.
 */
export const MAX_PARAMETER_VALUE_LENGTH = 255;

const TYPE_RULES: Record<NativeApmParameter["type"], { valid: (value: string) => boolean; message: string }> =
  {
    numeric: { valid: (value) => /^[0-9]+$/.test(value), message: "must hold digits only" },
    text: { valid: (value) => /^[\p{L}\p{N}]+$/u.test(value), message: "must hold letters and digits only" },
    email: { valid: (value) => z.email().safeParse(value).success, message: "must be a valid email address" },
    phone: {
      valid: (value) => /^\+?[0-9][0-9 ().-]*$/.test(value) && value.replace(/[^0-9]/g, "").length >= 4,
      message: "must be a phone number",
    },
    string: { valid: () => true, message: "" },
  };

export function parameterProblems(
  parameters: readonly NativeApmParameter[],
  values: Readonly<Record<string, unknown>>,
): Array<InvalidField & { missing: boolean }> {
  const expected = parameters.map((parameter) => parameter.key);
  const problems: Array<InvalidField & { missing: boolean }> = Object.keys(values)
    .filter((key) => !expected.includes(key))
    .map((key) => ({
      name: key,
      message: `is not asked for here (expected: ${expected.join(", ") || "nothing"})`,
      missing: false,
    }));
  for (const parameter of parameters) {
    const value = values[parameter.key];
    const problem = (message: string, missing = false) =>
      problems.push({ name: parameter.key, message, missing });
    if (value === undefined || value === null || value === "") {
      if (parameter.required) problem("is required", true);
      continue;
    }
    if (typeof value !== "string") {
      problem("must be a string");
      continue;
    }
    if (value.length > MAX_PARAMETER_VALUE_LENGTH) {
      problem(`must be at most ${MAX_PARAMETER_VALUE_LENGTH} characters`);
      continue;
    }
    const rule = TYPE_RULES[parameter.type];
    if (!rule.valid(value)) problem(rule.message);
    else if (parameter.length !== null && value.length !== parameter.length)
      problem(`must be exactly ${parameter.length} characters long`);
  }
  return problems;
}
