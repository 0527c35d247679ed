/**
 * POST /transactions: the list of `GET /transactions`, its options (`limit`, `order`, `start_after`,
 * `end_before`, `expand`) in the JSON body, as the client libraries send them. The same function code.
 */
export { handler } from "./list.ts";
