import { GetCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
import { sandboxCardConfiguration } from "../gateways/configuration.ts";
import { gatewayConfigurationPut } from "../gateways/store.ts";
import { environmentProjectId, newId } from "../ids.ts";
import { newWebhookSigningSecret } from "../webhooks/signature.ts";
import { hashPrivateKey, newPrivateKey } from "./keys.ts";

/**
 * A project has two environments, sandbox and live, each addressed by its own project id
 * (`test-proj_…` and `proj_…`) with its own private key. Everything a merchant stores lives
 * under one environment; the environment's id is the scope of every key of its data.
 */
export interface ProjectEnvironment {
  id: string;
  root_project_id: string;
  name: string;
  sandbox: boolean;
  key_hash: string;
  created_at: string;
  /** Where the environment's events are POSTed (`PUT /projects/{id}`); null until set. */
  webhook_url?: string | null;
  /** Signs every webhook; environments created before it existed get one on first need (`shared/webhooks`). */
  webhook_signing_secret?: string;
}

export interface EnvironmentCredentials {
  project_id: string;
  private_key: string;
}

export interface ProjectCredentials {
  sandbox: EnvironmentCredentials;
  live: EnvironmentCredentials;
}

const MAX_NAME_LENGTH = 80;

/**
 * Creates a project with both environments, atomically, and returns the keys (shown only once).
 * Each environment starts with a `sandbox` gateway configuration for cards.
 */
export async function createProject(name: string, now = new Date()): Promise<ProjectCredentials> {
  if (!name.trim() || name.length > MAX_NAME_LENGTH) {
    throw new Error(`A project name is 1 to ${MAX_NAME_LENGTH} characters.`);
  }
  const rootId = newId("project");
  const environments = [true, false].map((sandbox) => {
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
    };
    return { environment, privateKey };
  });
  await dynamo.send(
    new TransactWriteCommand({
      TransactItems: environments.flatMap(({ environment }) => [
        {
          Put: {
            TableName: config.tableName,
            Item: { ...keys.project(environment.id), type: "project", ...environment },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        gatewayConfigurationPut(sandboxCardConfiguration(environment.id, environment.sandbox, now)),
      ]),
    }),
  );
  const [sandbox, live] = environments.map(({ environment, privateKey }) => ({
    project_id: environment.id,
    private_key: privateKey,
  })) as [EnvironmentCredentials, EnvironmentCredentials];
  return { sandbox, live };
}

/**
 * Environments are read on every request, so a container keeps them for a short while.
 * What is cached is the stored key hash, never a verdict: a wrong key still fails at once.
 */
const CACHE_TTL_MS = 30_000;
const CACHE_MAX_ENTRIES = 1_000;
const cache = new Map<string, { environment: ProjectEnvironment | undefined; until: number }>();

export async function findEnvironment(id: string): Promise<ProjectEnvironment | undefined> {
  const now = Date.now();
  const cached = cache.get(id);
  if (cached && cached.until > now) return cached.environment;
  const { Item } = await dynamo.send(new GetCommand({ TableName: config.tableName, Key: keys.project(id) }));
  const environment = Item as ProjectEnvironment | undefined;
  if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
  // An unknown id is remembered only briefly, so a project created elsewhere is usable at once.
  cache.set(id, { environment, until: now + (environment ? CACHE_TTL_MS : 1_000) });
  return environment;
}

/** The public view of an environment (`GET /projects/{id}`). */
export function presentProject(environment: ProjectEnvironment) {
  return {
    id: environment.id,
    name: environment.name,
    sandbox: environment.sandbox,
    created_at: environment.created_at,
  };
}
