import type { Page, PageRequest } from "../db/listing.ts";
import { ID_PREFIXES, type IdKind, isId } from "../ids.ts";
import { invalidField, validationFailed } from "./errors.ts";
import type { Input } from "./input.ts";
import { ok, type Reply } from "./reply.ts";

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

/**
 * A listing parameter counts as given unless it is absent, empty, Python's `None`, or (for `limit`)
 * zero: one client library adds `limit=0&end_before=&start_after=` to every request, in the query
 * string and in JSON bodies alike (where `null` is absent and numbers arrive as text), and the Python
 * one writes an unset option as `None` in query strings.
 */
function given(value: unknown): boolean {
  return value !== undefined && value !== "" && value !== "0" && value !== "None";
}

function pick(name: string, query: Input, body: Input): unknown {
  return given(body[name]) ? body[name] : given(query[name]) ? query[name] : undefined;
}

/**
 * What a cursor must look like: an id of a kind (`cust_…`), or the ids a merchant chooses (plans),
 * described for the error message.
 */
export type CursorRule = IdKind | { pattern: RegExp; description: string };

/**
 * Reads `limit`, `order`, `start_after` and `end_before` with the spec's rules. A `filter` is refused
 * (400 naming it) unless the list reads its own (`ownFilter`): the client libraries send one as not
 * given, but a list that ignored a real one would answer more than was asked for.
 */
export function readPageRequest(
  input: { query: Input; body: Input },
  idKind: CursorRule,
  options: { ownFilter?: true } = {},
): PageRequest {
  const { query, body } = input;
  if (!options.ownFilter && pick("filter", query, body) !== undefined) {
    throw invalidField(
      "filter",
      "is not supported on this list: page through it, or export it (POST /exports)",
    );
  }
  const rawLimit = pick("limit", query, body);
  let limit = DEFAULT_LIMIT;
  if (rawLimit !== undefined) {
    const text = String(rawLimit);
    if (!/^\d+$/.test(text) || Number(text) > MAX_LIMIT) {
      throw invalidField("limit", `must be an integer from 0 to ${MAX_LIMIT}`);
    }
    limit = Number(text);
  }

  const rawOrder = pick("order", query, body) ?? "desc";
  if (rawOrder !== "asc" && rawOrder !== "desc") throw invalidField("order", "must be asc or desc");

  const startAfter = cursor("start_after", pick("start_after", query, body), idKind);
  const endBefore = cursor("end_before", pick("end_before", query, body), idKind);
  if (startAfter !== undefined && endBefore !== undefined) {
    throw validationFailed(
      "invalid-cursor",
      [
        { name: "start_after", message: "cannot be combined with end_before" },
        { name: "end_before", message: "cannot be combined with start_after" },
      ],
      "start_after and end_before cannot be combined in one call.",
    );
  }
  return { limit, order: rawOrder, startAfter, endBefore };
}

function cursor(name: string, value: unknown, rule: CursorRule): string | undefined {
  if (value === undefined) return undefined;
  const valid =
    typeof value === "string" && (typeof rule === "string" ? isId(rule, value) : rule.pattern.test(value));
  if (!valid) {
    throw invalidField(
      name,
      typeof rule === "string"
        ? `must be an id starting with ${ID_PREFIXES[rule]}`
        : `must be ${rule.description}`,
    );
  }
  return value as string;
}

/** The list envelope: the page under its plural name, then `count`, `has_more`, `total_count`, … */
export function pageReply<T>(name: string, page: Page<T>, request: PageRequest): Reply {
  return ok({
    [name]: page.items,
    count: page.items.length,
    has_more: page.hasMore,
    total_count: page.totalCount,
    limit: request.limit,
    order: request.order,
  });
}
