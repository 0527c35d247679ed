import fc from "fast-check";
import { isDeclaredPathParameter, PATH_PARAMETERS } from "../../shared/http/path-parameters.ts";

/** The `{name}` parameters of a route path template, in order. */
export function parametersOf(template: string): string[] {
  return [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
}

/** The path of `template` with each parameter replaced by its value, percent-encoded. */
export function fillPath(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ""));
}

/** Values of a declared path parameter's shape (`shared/http/path-parameters.ts`). */
export function wellFormed(name: string): fc.Arbitrary<string> {
  if (!isDeclaredPathParameter(name)) throw new Error(`{${name}} has no declared shape`);
  return fc.stringMatching(PATH_PARAMETERS[name].pattern);
}

/** One well-formed value of the parameter, the same on every run. */
export function aWellFormed(name: string): string {
  return fc.sample(wellFormed(name), { seed: 42, numRuns: 1 })[0] as string;
}
