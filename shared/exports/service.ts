import { clock, nowIn } from "../clock.ts";
import type { PageRequest } from "../db/listing.ts";
import type { Caller } from "../http/auth.ts";
import { invalidField, notFound } from "../http/errors.ts";
import { isId, newId } from "../ids.ts";
import { findEnvironment } from "../projects/environment.ts";
import { parseInput } from "../validation/parse.ts";
import type { ExportType } from "./catalogue.ts";
import {
  dailyExportId,
  type ExportRecord,
  exportFileName,
  type PresentedExport,
  presentExport,
} from "./export.ts";
import { findExport, insertExport, listExports } from "./export-store.ts";
import { builtInConfiguration, type ExportLayout } from "./layout.ts";
import { findLayout } from "./layout-store.ts";
import { defaultLayoutOf } from "./layouts.ts";
import { requestExportInput } from "./schema.ts";

/**
 * Requesting exports (`POST /exports`: recorded `pending`; the table's stream starts its run in the
 * background, `functions/exports/enqueue.ts` → `functions/exports/run.ts`) and reading them.
 */
export const MAX_EXPORT_DAYS = 366;
const DAY_MS = 24 * 3600 * 1000;

/** The layout an export uses: the one named (of its type), else the environment's default, else the built-in. */
async function chosenLayout(caller: Caller, type: ExportType, layoutId: string | null | undefined) {
  if (layoutId === null || layoutId === undefined)
    return (await defaultLayoutOf(caller.projectId, type)) ?? null;
  const found = isId("exportLayout", layoutId) ? await findLayout(caller.projectId, layoutId) : undefined;
  if (!found)
    throw invalidField("layout_id", "is not an export layout of this environment", "invalid-layout");
  if (found.layout.type !== type) {
    throw invalidField(
      "layout_id",
      `is a layout of ${found.layout.type} exports, not ${type}`,
      "invalid-layout",
    );
  }
  return found.layout;
}

function newExport(
  caller: Caller,
  fields: {
    id: string;
    type: ExportType;
    from: string;
    to: string;
    origin: ExportRecord["origin"];
    fileName?: string;
  },
  layout: ExportLayout | null,
  clockOffsetMs: number,
): ExportRecord {
  return {
    id: fields.id,
    project_id: caller.projectId,
    type: fields.type,
    layout_id: layout?.id ?? null,
    configuration: layout?.configuration ?? builtInConfiguration(fields.type),
    from: fields.from,
    to: fields.to,
    clock_offset_ms: clockOffsetMs,
    origin: fields.origin,
    status: "pending",
    rows: null,
    size: null,
    file_name: fields.fileName ?? exportFileName(fields.id, fields.type, fields.from, fields.to),
    location: null,
    error: null,
    delivery: null,
    lease_until: null,
    sandbox: caller.sandbox,
    created_at: clock.now().toISOString(),
    completed_at: null,
  };
}

/** `POST /exports`: the rows of `type` created in `[from, to)`, in a layout; runs in the background. */
export async function requestExport(caller: Caller, input: unknown): Promise<PresentedExport> {
  const fields = parseInput(requestExportInput, input);
  const span = Date.parse(fields.to) - Date.parse(fields.from);
  if (span <= 0) throw invalidField("to", "must be after from");
  if (span > MAX_EXPORT_DAYS * DAY_MS)
    throw invalidField("to", `must be at most ${MAX_EXPORT_DAYS} days after from`);
  const layout = await chosenLayout(caller, fields.type, fields.layout_id);
  const record = newExport(
    caller,
    { id: newId("export"), type: fields.type, from: fields.from, to: fields.to, origin: "request" },
    layout,
    nowIn(caller.environment).getTime() - clock.now().getTime(),
  );
  await insertExport(record);
  return presentExport(record);
}

export async function getExport(caller: Caller, id: string): Promise<PresentedExport> {
  const found = isId("export", id) ? await findExport(caller.projectId, id) : undefined;
  if (!found) throw notFound("export", id);
  return presentExport(found);
}

export async function pageOfExports(caller: Caller, page: PageRequest) {
  const result = await listExports(caller.projectId, page);
  return { ...result, items: result.items.map(presentExport) };
}

/**
 * The automatic export of `type` for `day` (UTC, on the environment's clock) in the environment's
 * default layout: made once, under an id that is a function of environment, type and day, so a
 * repeated daily run finds it. Undefined when the type has no default layout.
 */
export async function dailyExport(
  scope: string,
  type: ExportType,
  day: string,
): Promise<ExportRecord | undefined> {
  const id = dailyExportId(scope, type, day);
  const existing = await findExport(scope, id);
  if (existing) return existing;
  const layout = await defaultLayoutOf(scope, type);
  if (!layout) return undefined;
  const environment = await findEnvironment(scope);
  if (!environment) throw new Error(`No environment ${scope} for its daily exports`);
  const caller: Caller = { projectId: scope, sandbox: environment.sandbox, environment };
  const from = new Date(`${day}T00:00:00.000Z`);
  const record = newExport(
    caller,
    {
      id,
      type,
      from: from.toISOString(),
      to: new Date(from.getTime() + DAY_MS).toISOString(),
      origin: "daily",
      fileName: `${type}_${day}.csv`,
    },
    layout,
    nowIn(environment).getTime() - clock.now().getTime(),
  );
  if ((await insertExport(record)) === "exists") return (await findExport(scope, id)) ?? record;
  return record;
}
