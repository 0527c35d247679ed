import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  LOCAL_STACK_FILE,
  readLocalStackFile,
  stackIsRunning,
  useLocalTable,
} from "../lib/local/stack-file.ts";

/**
 * `npm run project -- create --name <name>`: creates a project (sandbox and live environments) and
 * prints its credentials as JSON, in the shape of the local stack's `credentials.json`.
 *
 * Target: with TABLE_NAME set, that table through the SDK's usual configuration (AWS credentials
 * and region from the environment; `AWS_ENDPOINT_URL_DYNAMODB` if set) — a deployed stage's
 * `TableName` output. Without it, the running local stack, found through `DATA_DIR/local-stack.json`.
 */

const USAGE = `Usage: npm run project -- create --name <name>

Creates a project with a sandbox and a live environment and prints their credentials as JSON.
Target: the table named by TABLE_NAME (AWS credentials and region from the environment), or,
without TABLE_NAME, the running local stack (\`npm start\`; DATA_DIR, default .data).`;

class UsageError extends Error {}

function parseArguments(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: { name: { type: "string" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
    });
  } catch (error) {
    // Unknown options and `--name` without a value.
    throw new UsageError((error as Error).message);
  }
}

function parseCommand(argv: string[]): { name: string } | "help" {
  const { values, positionals } = parseArguments(argv);
  if (values.help || positionals[0] === "help") return "help";
  const [command, ...extra] = positionals;
  if (command === undefined) throw new UsageError("Missing command.");
  if (command !== "create") throw new UsageError(`Unknown command "${command}".`);
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}".`);
  if (values.name === undefined || values.name.trim() === "") throw new UsageError("Missing --name <name>.");
  return { name: values.name };
}

/** Points the SDK and `shared/config.ts` at the running local stack, or explains why it cannot. */
async function targetLocalStack() {
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
    if (!process.env.TABLE_NAME) await targetLocalStack();
    // Imported only now: shared/config.ts reads TABLE_NAME once, at import.
    const { createProject } = await import("../shared/projects/project.ts");
    const credentials = await createProject(command.name);
    console.log(JSON.stringify(credentials, null, 2));
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`Could not create the project: ${message}`);
    return 1;
  }
}

process.exitCode = await main();
