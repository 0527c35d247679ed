/**
 * zod as the code that ships in Lambda bundles uses it: `zod/mini`, the same v4 core as classic
 * `zod` with functions in place of methods (`z.optional(s)`, `s.check(z.maxLength(2))`), so that
 * a bundle carries only what it uses. Classic zod is about 95 KiB in every bundle, used or not.
 * Import it as `import * as z from "../validation/zod.ts"`.
 *
 * Issues are worded in English, as classic zod words them (mini has no locale of its own).
 */

import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";

z.config(en());

export * from "zod/mini";

/**
 * `fn` runs on the input before `schema` parses it (classic zod's `z.preprocess`, which mini does
 * not have: the same pipe of a transform into the schema).
 */
export function preprocess<Output extends z.core.$ZodType>(
  fn: (input: unknown) => unknown,
  schema: Output,
): z.ZodMiniPipe<z.ZodMiniTransform<unknown, unknown>, Output> {
  return z.pipe(z.transform(fn), schema);
}
