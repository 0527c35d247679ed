import { clock } from "../clock.ts";
import type { Scope } from "../db/keys.ts";
import type { PageRequest } from "../db/listing.ts";
import type { Caller } from "../http/auth.ts";
import { busy, invalidField, notFound } from "../http/errors.ts";
import { isId, newId } from "../ids.ts";
import { parseInput } from "../validation/parse.ts";
import { configurationOptions, type ExportType, isExportType } from "./catalogue.ts";
import {
  type ExportLayout,
  newLayout,
  type PresentedLayout,
  presentBuiltInLayout,
  presentLayout,
} from "./layout.ts";
import {
  type DefaultChange,
  defaultLayoutIds,
  deleteLayout,
  findDefaultLayoutId,
  findLayout,
  insertLayout,
  listLayouts,
  replaceLayout,
  type VersionedLayout,
} from "./layout-store.ts";
import { createLayoutInput, resolveConfiguration, updateLayoutInput } from "./schema.ts";

/** Export layouts: create, read, list, change, delete; each type's default; each type's choices. */

const concurrentChange = (what: string) =>
  busy("request.export-layout.concurrent-update", `${what} is being changed by another request; try again.`);

function knownType(type: string): ExportType {
  if (!isExportType(type)) throw notFound("export-type", type);
  return type;
}

/** `POST /exports/layouts` */
export async function createLayout(caller: Caller, input: unknown): Promise<PresentedLayout> {
  const fields = parseInput(createLayoutInput, input);
  const configuration = resolveConfiguration(fields.type, fields.configuration);
  const layout = newLayout(caller, newId("exportLayout"), { ...fields, configuration }, clock.now());
  const makeDefault = fields.is_default === true;
  const change: DefaultChange = makeDefault
    ? { kind: "claim", previous: await findDefaultLayoutId(caller.projectId, fields.type) }
    : { kind: "none" };
  if ((await insertLayout(layout, change)) === "changed") {
    throw concurrentChange(`The default ${fields.type} layout`);
  }
  return presentLayout(layout, makeDefault);
}

async function existingLayout(caller: Caller, id: string): Promise<VersionedLayout> {
  const found = isId("exportLayout", id) ? await findLayout(caller.projectId, id) : undefined;
  if (!found) throw notFound("export-layout", id);
  return found;
}

/** `GET /exports/layouts/{id}` */
export async function getLayout(caller: Caller, id: string): Promise<PresentedLayout> {
  const found = await existingLayout(caller, id);
  const defaultId = await findDefaultLayoutId(caller.projectId, found.layout.type);
  return presentLayout(found.layout, defaultId === found.layout.id);
}

/** `GET /exports/layouts` */
export async function pageOfLayouts(caller: Caller, page: PageRequest) {
  const [result, defaults] = await Promise.all([
    listLayouts(caller.projectId, page),
    defaultLayoutIds(caller.projectId),
  ]);
  return { ...result, items: result.items.map((layout) => presentLayout(layout, defaults.has(layout.id))) };
}

/** `PUT /exports/layouts/{id}`: name, configuration, and whether it is its type's default. */
export async function changeLayout(caller: Caller, id: string, input: unknown): Promise<PresentedLayout> {
  const fields = parseInput(updateLayoutInput, input);
  const current = await existingLayout(caller, id);
  const { layout } = current;
  if (
    fields.type !== undefined &&
    fields.type !== null &&
    fields.type !== "" &&
    fields.type !== layout.type
  ) {
    throw invalidField("type", "cannot change: create a layout of the other type instead");
  }
  const defaultId = await findDefaultLayoutId(caller.projectId, layout.type);
  const wasDefault = defaultId === layout.id;
  const change: DefaultChange =
    fields.is_default === true && !wasDefault
      ? { kind: "claim", previous: defaultId }
      : fields.is_default === false && wasDefault
        ? { kind: "release" }
        : { kind: "none" };
  const next: ExportLayout = {
    ...layout,
    ...(fields.name !== undefined ? { name: fields.name } : {}),
    ...(fields.configuration !== undefined
      ? { configuration: resolveConfiguration(layout.type, fields.configuration) }
      : {}),
    updated_at: clock.now().toISOString(),
  };
  if ((await replaceLayout(current, next, change)) === "changed") throw concurrentChange(`Layout ${id}`);
  const isDefault = change.kind === "claim" ? true : change.kind === "release" ? false : wasDefault;
  return presentLayout(next, isDefault);
}

/** `DELETE /exports/layouts/{id}`: a default layout leaves its type without one (no automatic export). */
export async function removeLayout(caller: Caller, id: string): Promise<void> {
  const current = await existingLayout(caller, id);
  const defaultId = await findDefaultLayoutId(caller.projectId, current.layout.type);
  if ((await deleteLayout(current, defaultId === current.layout.id)) === "changed") {
    throw concurrentChange(`Layout ${id}`);
  }
}

/** The environment's default layout of `type`, when it chose one. */
export async function defaultLayoutOf(scope: Scope, type: ExportType): Promise<ExportLayout | undefined> {
  const id = await findDefaultLayoutId(scope, type);
  return id === null ? undefined : (await findLayout(scope, id))?.layout;
}

/** `GET /exports/layouts/default/{type}`: the environment's default, or the built-in layout. */
export async function getDefaultLayout(caller: Caller, type: string) {
  const known = knownType(type);
  const layout = await defaultLayoutOf(caller.projectId, known);
  return layout ? presentLayout(layout, true) : presentBuiltInLayout(caller, known);
}

/** `GET /exports/layouts/options/{type}` */
export function layoutOptions(type: string) {
  return configurationOptions(knownType(type));
}

export const EXPORT_LAYOUT_CURSOR = "exportLayout" as const;
