import { activityWrite } from "../activities/activity.ts";
import { cardVault, type SealedSecret } from "../cards/vault.ts";
import { clock } from "../clock.ts";
import { type PageRequest, pageOfList } from "../db/listing.ts";
import { failedConditions, type TransactItem, transactWrite } from "../db/transactions.ts";
import type { Caller } from "../http/auth.ts";
import { invalidField, notFound, validationFailed } from "../http/errors.ts";
import { isId } from "../ids.ts";
import { parseInput } from "../validation/parse.ts";
import { type GatewayDefinition, gatewayNamed, type PaymentMethod } from "./catalogue.ts";
import {
  definitionOf,
  type GatewayConfiguration,
  newConfiguration,
  type PresentedConfiguration,
  presentConfiguration,
} from "./configuration.ts";
import { type ConfigurationInput, configurationInput } from "./schema.ts";
import {
  forgetConfigurations,
  gatewayConfigurationOwnerPut,
  gatewayConfigurationPut,
  gatewayConfigurationReplace,
  readConfigurations,
} from "./store.ts";

/**
 * The API of gateway configurations: list (`filter`, `with_disabled`, `expand_merchant_accounts`),
 * get, create for a gateway, change, delete.
 */
export const LIST_FILTERS = {
  "native-alternative-payment-methods": "native-apm",
  "card-payments": "card",
} as const satisfies Record<string, PaymentMethod>;

export interface ListOptions {
  filter?: PaymentMethod;
  /** Only the configurations of this gateway (`GET /gateways/{name}/gateway-configurations`). */
  gatewayName?: string;
  withDisabled: boolean;
  expandGateway: boolean;
}

/** `filter`: a name of `LIST_FILTERS`; empty, `null` or Python's `None` means none. */
export function readListFilter(value: unknown): PaymentMethod | undefined {
  if (value === undefined || value === null || value === "" || value === "null" || value === "None")
    return undefined;
  if (typeof value === "string" && Object.hasOwn(LIST_FILTERS, value))
    return LIST_FILTERS[value as keyof typeof LIST_FILTERS];
  throw invalidField("filter", `must be one of ${Object.keys(LIST_FILTERS).join(", ")}`);
}

export async function pageOfConfigurations(caller: Caller, page: PageRequest, options: ListOptions) {
  if (options.gatewayName !== undefined && !gatewayNamed(options.gatewayName)) {
    throw notFound("gateway", options.gatewayName);
  }
  const shown = (await readConfigurations(caller.projectId)).filter(
    (configuration) =>
      configuration.deleted_at === null &&
      (options.withDisabled || configuration.enabled) &&
      (options.filter === undefined || configuration.payment_method === options.filter) &&
      (options.gatewayName === undefined || configuration.gateway_name === options.gatewayName),
  );
  const result = pageOfList(shown, page);
  return { ...result, items: result.items.map((item) => presentConfiguration(item, options.expandGateway)) };
}

async function liveConfiguration(caller: Caller, id: string): Promise<GatewayConfiguration> {
  const found = isId("gatewayConfiguration", id)
    ? (await readConfigurations(caller.projectId)).find(
        (configuration) => configuration.id === id && configuration.deleted_at === null,
      )
    : undefined;
  if (!found) throw notFound("gateway-configuration", id);
  return found;
}

export async function getConfiguration(
  caller: Caller,
  id: string,
  expandGateway: boolean,
): Promise<PresentedConfiguration> {
  return presentConfiguration(await liveConfiguration(caller, id), expandGateway);
}

/** `POST /gateways/{gateway_name}/gateway-configurations` */
export async function createConfiguration(
  caller: Caller,
  gatewayName: string,
  input: unknown,
  commit: (presented: PresentedConfiguration) => TransactItem[],
): Promise<PresentedConfiguration> {
  const gateway = gatewayNamed(gatewayName);
  if (!gateway) throw notFound("gateway", gatewayName);
  const fields = parseInput(configurationInput, input);
  const method = fields.payment_method ?? defaultMethod(gateway);
  if (!gateway.methods[method]) {
    throw invalidField(
      "payment_method",
      `the ${gateway.name} gateway offers ${Object.keys(gateway.methods).join(", ")}`,
    );
  }
  const settings = checkedSettings(gateway, caller.sandbox, {}, fields.settings ?? {});
  const configuration = newConfiguration(
    {
      projectId: caller.projectId,
      sandbox: caller.sandbox,
      gateway,
      paymentMethod: method,
      name: fields.name ?? null,
      enabled: fields.enabled ?? true,
      defaultCurrency: fields.default_currency ?? null,
      currencies: fields.currencies?.length ? fields.currencies : null,
      settings: {},
    },
    clock.now(),
  );
  const stored = await withSettings(configuration, gateway, settings);
  const presented = presentConfiguration(stored, false);
  await transactWrite([
    gatewayConfigurationPut(stored),
    gatewayConfigurationOwnerPut(stored),
    ...activityWrite(
      caller,
      "gateway_configuration.created",
      `Gateway configuration ${describe(stored)} created`,
      { type: "gateway_configuration", id: stored.id },
      clock.now(),
    ),
    ...commit(presented),
  ]);
  forgetConfigurations(caller.projectId);
  return presented;
}

/** A gateway's first method, cards when it offers them (client libraries send no method). */
function defaultMethod(gateway: GatewayDefinition): PaymentMethod {
  return gateway.methods.card ? "card" : (Object.keys(gateway.methods)[0] as PaymentMethod);
}

/** `PUT /gateway-configurations/{id}`: only the fields sent change; a setting set to `""` is removed. */
export async function updateConfiguration(
  caller: Caller,
  id: string,
  input: unknown,
): Promise<PresentedConfiguration> {
  const fields: ConfigurationInput = parseInput(configurationInput, input);
  const current = await liveConfiguration(caller, id);
  const gateway = definitionOf(current);
  if (fields.payment_method && fields.payment_method !== current.payment_method) {
    throw invalidField("payment_method", "cannot change: create another configuration for another method");
  }
  const settings = checkedSettings(
    gateway,
    current.sandbox,
    current.settings,
    fields.settings ?? {},
    current.secrets,
  );
  const changed: GatewayConfiguration = {
    ...current,
    ...(fields.name !== undefined ? { name: fields.name } : {}),
    ...(fields.enabled !== undefined ? { enabled: fields.enabled } : {}),
    ...(fields.default_currency !== undefined ? { default_currency: fields.default_currency } : {}),
    ...(fields.currencies !== undefined
      ? { currencies: fields.currencies?.length ? fields.currencies : null }
      : {}),
  };
  const stored = await withSettings(changed, gateway, settings);
  const what = Object.keys(fields).filter((name) => fields[name as keyof ConfigurationInput] !== undefined);
  await replace(
    caller,
    stored,
    "gateway_configuration.updated",
    `Gateway configuration ${describe(stored)} updated (${what.join(", ") || "nothing sent"})`,
  );
  return presentConfiguration(stored, false);
}

/** `DELETE /gateway-configurations/{id}`: kept for the payments made through it, never shown again. */
export async function deleteConfiguration(caller: Caller, id: string): Promise<void> {
  const current = await liveConfiguration(caller, id);
  await replace(
    caller,
    { ...current, enabled: false, deleted_at: clock.now().toISOString() },
    "gateway_configuration.deleted",
    `Gateway configuration ${describe(current)} deleted`,
  );
}

/** How the activity log names a configuration: its name, gateway and id. */
const describe = (configuration: GatewayConfiguration) =>
  `${configuration.name ? `"${configuration.name}" ` : ""}(${configuration.gateway_name}, ${configuration.id})`;

async function replace(
  caller: Caller,
  configuration: GatewayConfiguration,
  activity: "gateway_configuration.updated" | "gateway_configuration.deleted",
  title: string,
): Promise<void> {
  try {
    await transactWrite([
      gatewayConfigurationReplace(configuration),
      ...activityWrite(
        caller,
        activity,
        title,
        { type: "gateway_configuration", id: configuration.id },
        clock.now(),
      ),
    ]);
  } catch (error) {
    // Deleted meanwhile by another request.
    if (failedConditions(error)?.includes(0)) throw notFound("gateway-configuration", configuration.id);
    throw error;
  } finally {
    forgetConfigurations(caller.projectId);
  }
}

/** What a configuration's settings become: `null` for a setting removed (sent as `""`). */
type SettingChanges = Record<string, string | null>;

/**
 * Checks sent settings against the gateway's: unknown ones, missing required ones, and values the
 * environment cannot take (a live key in a sandbox) are refused, each named (`settings.<name>`).
 */
function checkedSettings(
  gateway: GatewayDefinition,
  sandbox: boolean,
  current: Record<string, string>,
  sent: Record<string, string>,
  currentSecrets: Record<string, unknown> = {},
): SettingChanges {
  const problems = Object.keys(sent)
    .filter((name) => !gateway.settings.some((setting) => setting.name === name))
    .map((name) => ({
      name: `settings.${name}`,
      message: `is not a setting of the ${gateway.name} gateway (${gateway.settings.map((setting) => setting.name).join(", ") || "it takes none"})`,
    }));
  for (const setting of gateway.settings) {
    const name = `settings.${setting.name}`;
    const sentValue = Object.hasOwn(sent, setting.name) ? sent[setting.name] : undefined;
    const after =
      sentValue ?? current[setting.name] ?? (Object.hasOwn(currentSecrets, setting.name) ? "set" : "");
    const required = setting.required === true || (setting.required === "live" && !sandbox);
    if (required && !after) problems.push({ name, message: "is required" });
    else if (setting.required === "live" && sandbox && sentValue) {
      problems.push({
        name,
        message: "is for live environments only: a sandbox uses the provider's test platform",
      });
    } else if (sentValue && setting.check) {
      const problem = setting.check(sentValue, { sandbox });
      if (problem) problems.push({ name, message: problem });
    }
  }
  if (problems.length > 0) throw validationFailed("invalid-settings", problems);
  return Object.fromEntries(Object.entries(sent).map(([name, value]) => [name, value === "" ? null : value]));
}

/** Applies setting changes: public ones as they are, secret ones sealed in the vault. */
async function withSettings(
  configuration: GatewayConfiguration,
  gateway: GatewayDefinition,
  changes: SettingChanges,
): Promise<GatewayConfiguration> {
  const settings = { ...configuration.settings };
  const secrets: Record<string, SealedSecret> = { ...configuration.secrets };
  for (const [name, value] of Object.entries(changes)) {
    const secret = gateway.settings.find((setting) => setting.name === name)?.secret === true;
    const target: Record<string, unknown> = secret ? secrets : settings;
    if (value === null) {
      delete target[name];
      continue;
    }
    if (!secret) settings[name] = value;
    else
      secrets[name] = await cardVault().seal(value, {
        projectId: configuration.project_id,
        cardId: configuration.id,
        field: `setting:${name}`,
      });
  }
  return { ...configuration, settings, secrets };
}
