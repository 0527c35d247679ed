/**
 * Configuration from the environment, read once per container at first use; a missing variable
 * fails with its name. Read lazily so that a function which never touches the table (the 404
 * fallback) does not need the table's name.
 */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

let tableName: string | undefined;

export const config = {
  get tableName(): string {
    tableName ??= required("TABLE_NAME");
    return tableName;
  },
  /** Base address of the hosted checkout pages (invoice `url`). */
  get checkoutUrl(): string {
    return process.env.CHECKOUT_URL ?? "https://checkout.localhost";
  },
};
