/**
 * The error kinds of the API. Client libraries map statuses to kinds (401 AuthenticationError,
 * 404 NotFoundError, 400 ValidationError, >= 500 InternalError, anything else GenericError) and
 * mobile libraries read `error_type`, so every error carries both.
 */
export interface InvalidField {
  name: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    message: string,
    readonly invalidFields?: InvalidField[],
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "ApiError";
  }
}

export const authenticationFailed = (message = "The credentials could not be verified.") =>
  new ApiError(401, "request.authentication.invalid", message);

/** Authenticated with the public key, for what only the merchant's server (the private key) may do. */
export const privateKeyRequired = (what: string) =>
  new ApiError(403, "request.authentication.private-key-required", `Only the private key can ${what}.`);

export const unknownProject = () =>
  new ApiError(401, "request.authentication.invalid-project-id", "The project id is not known.");

export const notFound = (resource: string, id?: string) =>
  new ApiError(
    404,
    `resource.${resource}.not-found`,
    id ? `The ${resource} ${id} could not be found.` : `The ${resource} could not be found.`,
  );

export const routeNotFound = (method: string, path: string) =>
  new ApiError(404, "request.route.not-found", `No route matches ${method} ${path}.`);

/** A request field could not be validated. `what` becomes `request.validation.<what>`. */
export const validationFailed = (what: string, invalidFields: InvalidField[], message?: string) =>
  new ApiError(
    400,
    `request.validation.${what}`,
    message ?? invalidFields.map((field) => `${field.name}: ${field.message}`).join("; "),
    invalidFields,
  );

export const invalidField = (name: string, message: string, what = `invalid-${errorTypeName(name)}`) =>
  validationFailed(what, [{ name, message }]);

/** `shipping.zip` → `shipping-zip`, `details[2].name` → `details-name`, `first_name` → `first-name`. */
export function errorTypeName(fieldPath: string): string {
  return fieldPath
    .replace(/\[\d+\]/g, "")
    .split(".")
    .join("-")
    .replaceAll("_", "-");
}

export const conflict = (errorType: string, message: string) => new ApiError(409, errorType, message);

/**
 * A conflict with work still under way (another request holds or is changing the resource): the
 * same request can succeed later, so it is never stored as an `Idempotency-Key`'s answer.
 */
export class BusyError extends ApiError {
  constructor(errorType: string, message: string) {
    super(409, errorType, message);
    this.name = "BusyError";
  }
}

export const busy = (errorType: string, message: string) => new BusyError(errorType, message);
