import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { keys } from "../db/keys.ts";
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

const MAX_NAME_LENGTH = 80;

/**
 * Creates a project with both environments, atomically, and returns the keys (shown only once).
 * Each environment starts with the sandbox's gateway configurations (cards and its native APM).
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
        ...startingConfigurations(environment.id, environment.sandbox, now).map(gatewayConfigurationPut),
      ]),
    }),
  );
  const [sandbox, live] = environments.map(({ environment, privateKey }) => ({
    project_id: environment.id,
    private_key: privateKey,
  })) as [EnvironmentCredentials, EnvironmentCredentials];
  return { sandbox, live };
}
