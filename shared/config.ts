/** Configuration, read once per container; a missing variable fails fast with its name. */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

export const config = {
  tableName: required("TABLE_NAME"),
  /** Base address of the hosted checkout pages (invoice `url`). */
  checkoutUrl: process.env.CHECKOUT_URL ?? "https://checkout.localhost",
};
