/**
 * `qs`'s parser module on its own: the package entry also brings `stringify` and its formats, which
 * the API never uses (5 KiB of every bundle). `qs` declares no `exports`, so the module is public.
 */
declare module "qs/lib/parse.js" {
  import type { IParseOptions, ParsedQs } from "qs";

  export default function parse(text: string, options?: IParseOptions): ParsedQs;
}
