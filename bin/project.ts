import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  LOCAL_STACK_FILE,
  readLocalStackFile,
  stackIsRunning,
  useLocalTable,
} from "../lib/local/stack-file.ts";

/**
 * `npm run project -- create --name <name> [--owner-email <email>] [--base-url <url>]`: creates a
 * project (sandbox and live environments) and prints its credentials as JSON, in the shape of the
 * local stack's `credentials.json`. With `--owner-email`, the project's first dashboard owner is
 * made too, and the JSON gains `owner`: their one-time sign-in link (valid 7 days) on the local
 * stack's address, or on `--base-url` (a deployed stage's API URL).
 *
 * Target: with TABLE_NAME set, that table through the SDK's usual configuration (AWS credentials
 * and region from the environment; `AWS_ENDPOINT_URL_DYNAMODB` if set) — a deployed stage's
 * `TableName` output. Without it, the running local stack, found through `DATA_DIR/local-stack.json`.
 */

const USAGE = `Usage: npm run project -- create --name <name> [--owner-email <email>] [--base-url <url>]

Creates a project with a sandbox and a live environment and prints their credentials as JSON.
With --owner-email, also the project's first dashboard owner and their one-time sign-in link
(on the local stack's address, or on --base-url: a deployed stage's API URL, required with TABLE_NAME).
Target: the table named by TABLE_NAME (AWS credentials and region from the environment), or,
without TABLE_NAME, the running local stack (\`npm start\`; DATA_DIR, default .data).`;

class UsageError extends Error {}

function parseArguments(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        name: { type: "string" },
        "owner-email": { type: "string" },
        "base-url": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
    });
  } catch (error) {
    // Unknown options and `--name` without a value.
    throw new UsageError((error as Error).message);
  }
}

interface CreateCommand {
  name: string;
  ownerEmail?: string;
  baseUrl?: string;
}

function parseCommand(argv: string[]): CreateCommand | "help" {
  const { values, positionals } = parseArguments(argv);
  if (values.help || positionals[0] === "help") return "help";
  const [command, ...extra] = positionals;
  if (command === undefined) throw new UsageError("Missing command.");
  if (command !== "create") throw new UsageError(`Unknown command "${command}".`);
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}".`);
  if (values.name === undefined || values.name.trim() === "") throw new UsageError("Missing --name <name>.");
  const ownerEmail = values["owner-email"];
  const baseUrl = values["base-url"];
  if (ownerEmail !== undefined && !/^[^\s@]+@[^\s@]+$/.test(ownerEmail.trim())) {
    throw new UsageError("--owner-email needs an email address.");
  }
  if (baseUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(baseUrl)) {
    throw new UsageError(
      "--base-url needs the API's address, e.g. https://abc.execute-api.eu-west-1.amazonaws.com.",
    );
  }
  if (baseUrl !== undefined && ownerEmail === undefined)
    throw new UsageError("--base-url goes with --owner-email.");
  return {
    name: values.name,
    ...(ownerEmail !== undefined ? { ownerEmail } : {}),
    ...(baseUrl !== undefined ? { baseUrl } : {}),
  };
}

/** Points the SDK and `shared/config.ts` at the running local stack, or explains why it cannot. */
async function targetLocalStack(): Promise<string> {
  const dataDir = resolve(process.env.DATA_DIR || ".data");
  const file = join(dataDir, LOCAL_STACK_FILE);
  const running = await readLocalStackFile(file);
  if (!running || !stackIsRunning(running)) {
    throw new Error(
      `The local stack is not running (no live ${file}). Start it with \`npm start\` ` +
        "(same DATA_DIR), or set TABLE_NAME to target a deployed stage's table.",
    );
  }
  useLocalTable(running.table_name, running.dynamodb_endpoint);
  return running.api_url;
}

async function main(): Promise<number> {
  let command: ReturnType<typeof parseCommand>;
  try {
    command = parseCommand(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (command === "help") {
    console.log(USAGE);
    return 0;
  }

  try {
    if (command.ownerEmail !== undefined && process.env.TABLE_NAME && !command.baseUrl) {
      throw new Error(
        "--base-url is required with TABLE_NAME: the deployed stage's API URL, where the link points.",
      );
    }
    const localUrl = process.env.TABLE_NAME ? undefined : await targetLocalStack();
    // Imported only now: shared/config.ts reads TABLE_NAME once, at import.
    const { createProject } = await import("../shared/projects/project.ts");
    const credentials = await createProject(command.name);
    if (command.ownerEmail === undefined) {
      console.log(JSON.stringify(credentials, null, 2));
      return 0;
    }
    const { firstOwner, linkUrl } = await import("../shared/dashboard/links.ts");
    const { normalEmail } = await import("../shared/dashboard/users.ts");
    const rootProjectId = credentials.live.project_id;
    const { user, link, token } = await firstOwner(
      rootProjectId,
      normalEmail(command.ownerEmail),
      new Date(),
    );
    const owner = {
      user_id: user.id,
      email: user.email,
      role: user.role,
      sign_in_link: linkUrl(command.baseUrl ?? localUrl ?? "", token),
      expires_at: link.valid_until,
    };
    console.log(JSON.stringify({ ...credentials, owner }, null, 2));
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`Could not create the project: ${message}`);
    return 1;
  }
}

process.exitCode = await main();
