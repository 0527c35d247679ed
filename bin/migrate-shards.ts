import { readFile, rename, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  LOCAL_STACK_FILE,
  readLocalStackFile,
  stackIsRunning,
  useLocalTable,
} from "../lib/local/stack-file.ts";

/**
 * `npx tsx bin/migrate-shards.ts`: moves the items and counts written before the listing index and
 * the counts were sharded to their shards (`shared/db/shard-migration.ts`). Once per stage, after
 * the deploy that brought the sharding; safe to run again, and to stop and run again: it resumes
 * from its checkpoint file (`--checkpoint`, default `migrate-shards.<table>.json`), where every
 * segment of a finished run is marked done (`--restart` scans again).
 *
 * Target: with TABLE_NAME set, that table through the SDK's usual configuration (AWS credentials
 * and region from the environment) — a deployed stage's `TableName` output. Without it, the running
 * local stack, found through `DATA_DIR/local-stack.json`.
 */
const USAGE = `Usage: npx tsx bin/migrate-shards.ts [--segments <n>] [--checkpoint <file>] [--restart]

Moves listed items and counts of the layout before the sharding to their shards (idempotent).
Target: the table named by TABLE_NAME (AWS credentials and region from the environment), or,
without TABLE_NAME, the running local stack (\`npm start\`; DATA_DIR, default .data).
--segments    parallel scan segments (default 4)
--checkpoint  where the scan's position is kept between runs (default migrate-shards.<table>.json)
--restart     ignore the checkpoint and scan the whole table again`;

async function main(): Promise<number> {
  let values: { segments?: string; checkpoint?: string; restart?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        segments: { type: "string" },
        checkpoint: { type: "string" },
        restart: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const segments = Number(values.segments ?? 4);
  if (!Number.isInteger(segments) || segments < 1 || segments > 1000) {
    console.error(`--segments must be an integer from 1 to 1000\n\n${USAGE}`);
    return 2;
  }
  if (!process.env.TABLE_NAME) {
    const dataDir = resolve(process.env.DATA_DIR || ".data");
    const running = await readLocalStackFile(join(dataDir, LOCAL_STACK_FILE));
    if (!running || !stackIsRunning(running)) {
      console.error(`The local stack is not running: start it with \`npm start\`, or set TABLE_NAME.`);
      return 1;
    }
    useLocalTable(running.table_name, running.dynamodb_endpoint);
  }
  // Imported only now: shared/config.ts reads TABLE_NAME once, at import.
  const { config } = await import("../shared/config.ts");
  const { migrateToShards } = await import("../shared/db/shard-migration.ts");
  const checkpoint = resolve(values.checkpoint ?? `migrate-shards.${config.tableName}.json`);
  let resumeFrom: Record<number, Record<string, unknown> | null> | undefined;
  if (!values.restart) {
    try {
      const saved = JSON.parse(await readFile(checkpoint, "utf8")) as {
        segments: number;
        positions: Record<number, Record<string, unknown> | null>;
      };
      if (saved.segments !== segments) {
        console.error(`${checkpoint} was written with --segments ${saved.segments}: use it, or --restart`);
        return 2;
      }
      resumeFrom = saved.positions;
      console.log(`Resuming from ${checkpoint}`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  const save = async (positions: Record<number, Record<string, unknown> | null>) => {
    await writeFile(`${checkpoint}.tmp`, JSON.stringify({ table: config.tableName, segments, positions }));
    await rename(`${checkpoint}.tmp`, checkpoint);
  };
  let saving = Promise.resolve();
  const tally = await migrateToShards({
    segments,
    resumeFrom,
    progress: (positions, sofar) => {
      saving = saving.then(() => save(positions));
      process.stdout.write(
        `\rscanned ${sofar.scanned}, listings moved ${sofar.listingsMoved}, counts moved ${sofar.countersMoved}, already done ${sofar.skipped}`,
      );
      return saving;
    },
  });
  await saving;
  console.log(
    `\n${tally.complete ? "Done" : "Stopped"}: scanned ${tally.scanned} items; moved ${tally.listingsMoved} listings and ${tally.countersMoved} counts; ${tally.skipped} found done already.`,
  );
  return tally.complete ? 0 : 1;
}

process.exitCode = await main();
