import { config } from "../config.ts";
import { keys } from "../db/keys.ts";
import { type TransactItem, transactWrite } from "../db/transactions.ts";
import { startingConfigurations } from "../gateways/configuration.ts";
import { gatewayConfigurationPut } from "../gateways/store.ts";
import { environmentProjectId, newId } from "../ids.ts";
import { newWebhookSigningSecret } from "../webhooks/signature.ts";
import type { ProjectEnvironment } from "./environment.ts";
import { hashPrivateKey, newPrivateKey } from "./keys.ts";

/** Creating projects (the local stack, the project CLI, tests); reading them is `environment.ts`. */
export interface EnvironmentCredentials {
  project_id: string;
  private_key: string;
}

export interface ProjectCredentials {
  sandbox: EnvironmentCredentials;
  live: EnvironmentCredentials;
}

export const MAX_NAME_LENGTH = 80;

/** What a new environment starts with beyond its keys (a supervised project's settings). */
export type EnvironmentSettings = Pick<
  ProjectEnvironment,
  | "supervisor_project_id"
  | "default_currency"
  | "dunning_configuration"
  | "applepay_settings"
  | "public_metadata"
>;

export interface NewEnvironment {
  environment: ProjectEnvironment;
  privateKey: string;
  /** Its item and its starting gateway configurations, for the transaction that creates it. */
  writes: TransactItem[];
}

/**
 * A new environment of the project `rootId`: its item (the private key hashed; the key itself is
 * returned once and never stored) and the sandbox's gateway configurations (cards and its native APM).
 */
export function newEnvironment(
  rootId: string,
  sandbox: boolean,
  name: string,
  now: Date,
  settings: EnvironmentSettings = {},
): NewEnvironment {
  const privateKey = newPrivateKey(sandbox);
  const environment: ProjectEnvironment = {
    id: environmentProjectId(rootId, sandbox),
    root_project_id: rootId,
    name,
    sandbox,
    key_hash: hashPrivateKey(privateKey),
    created_at: now.toISOString(),
    webhook_url: null,
    webhook_signing_secret: newWebhookSigningSecret(),
    ...settings,
  };
  const writes: TransactItem[] = [
    {
      Put: {
        TableName: config.tableName,
        Item: { ...keys.project(environment.id), type: "project", ...environment },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    ...startingConfigurations(environment.id, environment.sandbox, now).map(gatewayConfigurationPut),
  ];
  return { environment, privateKey, writes };
}

/** A project's name: 1 to 80 characters, not blank. */
export function checkProjectName(name: string): void {
  if (!name.trim() || name.length > MAX_NAME_LENGTH) {
    throw new Error(`A project name is 1 to ${MAX_NAME_LENGTH} characters.`);
  }
}

/**
 * Creates a project with both environments, atomically, and returns the keys (shown only once).
 * Each environment starts with the sandbox's gateway configurations (cards and its native APM).
 */
export async function createProject(name: string, now = new Date()): Promise<ProjectCredentials> {
  checkProjectName(name);
  const rootId = newId("project");
  const environments = [true, false].map((sandbox) => newEnvironment(rootId, sandbox, name, now));
  await transactWrite(environments.flatMap(({ writes }) => writes));
  const [sandbox, live] = environments.map(({ environment, privateKey }) => ({
    project_id: environment.id,
    private_key: privateKey,
  })) as [EnvironmentCredentials, EnvironmentCredentials];
  return { sandbox, live };
}
