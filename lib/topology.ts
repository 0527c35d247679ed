/**
 * The one declaration of what the service is made of. The CDK stack (`payment-stack.ts`) and the
 * local stack (`local/`) are both built from this table: adding an endpoint is one line here plus
 * its handler in `functions/<handler>.ts`, which exports `handler`.
 */
export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** What a function may do to the table: `read` grants read-only access, `write` read and write. */
export type TableAccess = "read" | "write";

export interface RouteDeclaration {
  method: HttpMethod;
  /** API Gateway path template, `{name}` for a path parameter. */
  path: string;
  /** Handler module under `functions/`, without extension. */
  handler: string;
  table: TableAccess;
}

export const routes: readonly RouteDeclaration[] = [
  { method: "POST", path: "/customers", handler: "customers/create", table: "write" },
  { method: "GET", path: "/customers", handler: "customers/list", table: "read" },
  { method: "GET", path: "/customers/{customer_id}", handler: "customers/get", table: "read" },
  { method: "PUT", path: "/customers/{customer_id}", handler: "customers/update", table: "write" },
  { method: "DELETE", path: "/customers/{customer_id}", handler: "customers/delete", table: "write" },
  { method: "POST", path: "/invoices", handler: "invoices/create", table: "write" },
  { method: "GET", path: "/invoices", handler: "invoices/list", table: "read" },
  { method: "GET", path: "/invoices/{invoice_id}", handler: "invoices/get", table: "read" },
  { method: "PUT", path: "/invoices/{invoice_id}", handler: "invoices/update", table: "write" },
  { method: "DELETE", path: "/invoices/{invoice_id}", handler: "invoices/delete", table: "write" },
];

/** Every request no route matches goes here (API Gateway's `$default` route): a 404 in JSON. */
export const fallbackRoute = { handler: "not-found", table: "none" } as const;

export const routeKey = (route: Pick<RouteDeclaration, "method" | "path">) => `${route.method} ${route.path}`;

/** `customers/create` → `CustomersCreate`: the construct id of the route's function. */
export function functionId(handler: string): string {
  return handler
    .split(/[/_-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

export const handlerEntry = (handler: string) => `functions/${handler}.ts`;
