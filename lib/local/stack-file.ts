import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/**
 * `DATA_DIR/local-stack.json` exists while a local stack runs, so tools (`npm run project`) can
 * find its table and DynamoDB. It is removed on a clean stop; `pid` and `pid_start_time` tell a stale
 * one apart (`stackIsRunning`).
 */
export const LOCAL_STACK_FILE = "local-stack.json";

export interface LocalStackFile {
  dynamodb_endpoint: string;
  table_name: string;
  api_url: string;
  /** The `npm start` process. */
  pid: number;
  /** When that process started (`processStartTime`), where it can be known: tells a successor on its pid apart. */
  pid_start_time?: string;
  /** DynamoDB Local's Java process, when the stack started it. */
  dynamodb_pid?: number;
}

export async function readLocalStackFile(file: string): Promise<LocalStackFile | undefined> {
  let parsed: Partial<LocalStackFile>;
  try {
    parsed = JSON.parse(await readFile(file, "utf8")) as Partial<LocalStackFile>;
  } catch {
    return undefined;
  }
  const complete =
    typeof parsed.dynamodb_endpoint === "string" &&
    typeof parsed.table_name === "string" &&
    typeof parsed.api_url === "string" &&
    typeof parsed.pid === "number" &&
    (parsed.pid_start_time === undefined || typeof parsed.pid_start_time === "string");
  return complete ? (parsed as LocalStackFile) : undefined;
}

/**
 * Whether the process `pid` runs, and is the one that started at `startTime` when that is known.
 * `kill(pid, 0)` alone is not enough: it reaches a zombie (a killed process its parent has not
 * reaped: for good under a PID 1 that reaps nothing, as in some containers) and a process that got
 * the pid later. Where `/proc` exists (Linux), the process's own status tells both apart: its state,
 * and its start time; elsewhere the signal check is all there is.
 */
export function processIsAlive(pid: number, startTime?: string): boolean {
  if (!existsSync(PROC_SELF)) return signalReaches(pid);
  const status = procStatus(pid);
  if (!status || status.state === "Z" || status.state === "X") return false;
  return startTime === undefined || status.startTime === startTime;
}

/** When `pid` started (clock ticks since boot, from `/proc`), to recognise it later; undefined without `/proc`. */
export function processStartTime(pid: number): string | undefined {
  return procStatus(pid)?.startTime;
}

/** Whether the stack a stack file describes still runs (its process, not a zombie, not a successor). */
export function stackIsRunning(stack: LocalStackFile): boolean {
  return processIsAlive(stack.pid, stack.pid_start_time);
}

const PROC_SELF = "/proc/self/stat";

function procStatus(pid: number): { state: string; startTime: string } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // `pid (command) state ppid …`: the command may hold spaces and parentheses, so fields are counted
  // from the last `)`. The start time is field 22, the 20th after the command.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const [state, startTime] = [fields[0], fields[19]];
  return state && startTime ? { state, startTime } : undefined;
}

function signalReaches(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Points the AWS SDK and `shared/config.ts` at a local stack's table in DynamoDB Local. Call it
 * before anything imports `shared/config.ts`, which reads `TABLE_NAME` once.
 */
export function useLocalTable(tableName: string, dynamodbEndpoint: string): void {
  const env = process.env;
  env.TABLE_NAME = tableName;
  env.AWS_ENDPOINT_URL_DYNAMODB = dynamodbEndpoint;
  env.AWS_REGION ??= "us-east-1";
  // DynamoDB Local accepts any credentials, but the SDK wants some to sign with.
  env.AWS_ACCESS_KEY_ID ??= "local";
  env.AWS_SECRET_ACCESS_KEY ??= "local";
}
