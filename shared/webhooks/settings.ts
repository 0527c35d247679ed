/**
 * Configuration of webhook delivery from the environment, read at first use; a missing variable
 * fails with its name. The variable names are declared here once: `lib/topology.ts` hands them to
 * the functions in AWS and the local stack sets them.
 */

/** URL of the delivery queue: set for the functions that send to it or change its messages. */
export const WEBHOOK_QUEUE_URL_VARIABLE = "WEBHOOK_QUEUE_URL";

/**
 * `allow` only in the local stack (and the tests): sandbox webhooks may then go to loopback and
 * private addresses, so a receiver on the developer's machine works. Deployed stages never set it:
 * there, sandbox webhooks only go to public addresses, like live ones (see `url-policy.ts`).
 */
export const SANDBOX_PRIVATE_NETWORK_VARIABLE = "WEBHOOK_SANDBOX_PRIVATE_NETWORK";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

let queueUrl: string | undefined;

export const webhookSettings = {
  get queueUrl(): string {
    queueUrl ??= required(WEBHOOK_QUEUE_URL_VARIABLE);
    return queueUrl;
  },
  /** Read on each use: the local stack sets it after start-up, before serving. */
  get sandboxMayUsePrivateNetwork(): boolean {
    return process.env[SANDBOX_PRIVATE_NETWORK_VARIABLE] === "allow";
  },
};
