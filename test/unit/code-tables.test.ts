import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain script, without types
import { render } from "../../scripts/code-tables.mjs";

/**
 * The ISO tables the API validates against are taken from currency-codes and i18n-iso-countries
 * (`scripts/code-tables.mjs`). When an update of either package changes them, this fails until the
 * table is generated again.
 */
describe("the ISO code tables", () => {
  it("are what the installed currency-codes and i18n-iso-countries packages say", () => {
    const committed = readFileSync(
      new URL("../../shared/validation/code-tables.ts", import.meta.url),
      "utf8",
    );
    expect(committed).toBe(render());
  });
});
