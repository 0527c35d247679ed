/** Developers: API keys, the webhook URL and its signing secret, gateway configurations, routing, the sandbox clock. */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, del, get, type Json, may, post, put } from "./api.ts";
import {
  Field,
  formValues,
  html,
  Loaded,
  Section,
  status,
  Table,
  useAction,
  useApp,
  useLoad,
  when,
} from "./ui.ts";

/** A private key just made: shown once, with the project id it goes with. */
function NewKey(props: { secret: { key: string; project: string } | null }) {
  if (!props.secret) return null;
  return html`<div class="new-key" role="alert">
    <p><strong>Copy this private key now: it is not shown again.</strong></p>
    <p>Project id <code>${props.secret.project}</code></p>
    <p>Private key <code class="secret" data-testid="new-private-key">${props.secret.key}</code></p>
  </div>`;
}

function ApiKeys() {
  const { session, environment } = useApp();
  const load = useLoad("api-keys");
  const { busy, run } = useAction();
  const [secret, setSecret] = useState<{ key: string; project: string } | null>(null);
  const project = session.environments[environment];
  const allowed = may(session.role, "developers");
  const create = (event: Event) => {
    const { name } = formValues(event);
    run(async () => {
      const answer = await post("api-keys", name ? { name } : {});
      setSecret({ key: answer.private_key, project });
      load.reload();
      return `Key ${answer.api_key.name ?? answer.api_key.id} created.`;
    });
  };
  const roll = (key: Json) =>
    run(async () => {
      const answer = await post(`api-keys/${key.id}/roll`, { overlap_seconds: 3600 });
      setSecret({ key: answer.private_key, project });
      load.reload();
      return `Key ${key.name ?? key.id} rolled: the old one works for one more hour.`;
    });
  const revoke = (key: Json) =>
    run(async () => {
      await del(`api-keys/${key.id}`);
      load.reload();
      return `Key ${key.name ?? key.id} revoked.`;
    });
  return html`<${Section} title="API keys">
    <${NewKey} secret=${secret} />
    <${Loaded} load=${load}>${(data: Json) =>
      html`<${Table} label="API keys" head=${["Name", "Ends in", "Status", "Created", "Last used", "Expires", ""]}
        rows=${data.api_keys.map((key: Json) => [
          key.name ?? "—",
          key.last4 ? `…${key.last4}` : "(first key)",
          status(key.status),
          when(key.created_at),
          when(key.last_used_at),
          when(key.expires_at),
          allowed && (key.status === "active" || key.status === "expiring")
            ? html`<span class="row-actions">
                ${
                  key.status === "active"
                    ? html`<button type="button" class="small" disabled=${busy} onClick=${() => roll(key)}
                  aria-label=${`Roll key ${key.name ?? key.id}`}>Roll</button>`
                    : null
                }
                <button type="button" class="small danger" disabled=${busy} onClick=${() => revoke(key)}
                  aria-label=${`Revoke key ${key.name ?? key.id}`}>Revoke</button></span>`
            : "",
        ])} />`}<//>
    ${
      allowed
        ? html`<form class="inline-form" onSubmit=${create}>
      <${Field} label="New key's name" name="name" />
      <button type="submit" disabled=${busy}>Create a key</button>
    </form>`
        : null
    }
  <//>`;
}

function Webhook() {
  const { session, environment } = useApp();
  const project = session.environments[environment];
  const load = useLoad(`projects/${project}`);
  const { busy, run } = useAction();
  const [revealed, setRevealed] = useState(false);
  const save = (event: Event) => {
    const { webhook_url } = formValues(event);
    run(async () => {
      const answer = await put(`projects/${project}`, { webhook_url });
      load.reload();
      return answer.project.webhook_url
        ? `Webhook URL set to ${answer.project.webhook_url}.`
        : "Webhook URL removed.";
    });
  };
  return html`<${Section} title="Webhooks">
    <${Loaded} load=${load}>${(data: Json) => html`
      <form class="inline-form" onSubmit=${save}>
        <${Field} label="Webhook URL" name="webhook_url" type="url" value=${data.project.webhook_url ?? ""}
          hint="Events of this environment are posted here." />
        <button type="submit" disabled=${busy || !may(session.role, "developers")}>Save</button>
      </form>
      <p>Signing secret: ${
        revealed
          ? html`<code class="secret">${data.project.webhook_signing_secret}</code>`
          : html`<button type="button" class="secondary small" onClick=${() => setRevealed(true)}>Show</button>`
      }</p>`}<//>
  <//>`;
}

/**
 * The settings each gateway's configurations take, as shared/gateways/catalogue.ts defines them (the
 * API lists no catalogue; the browser test holds this copy equal to it). Secret ones are write-only.
 */
export const GATEWAY_CATALOGUE: Record<
  string,
  { methods: string[]; settings: { name: string; secret: boolean; required: boolean | "live" }[] }
> = {
  sandbox: {
    methods: ["card", "native-apm"],
    settings: [
      { name: "merchant_account", secret: false, required: false },
      { name: "api_key", secret: true, required: false },
      { name: "outage", secret: false, required: false },
      { name: "soft_decline_cards", secret: false, required: false },
      { name: "unknown_outcome_cards", secret: false, required: false },
      { name: "latency_ms", secret: false, required: false },
    ],
  },
  stripe: {
    methods: ["card"],
    settings: [
      { name: "secret_key", secret: true, required: true },
      { name: "webhook_secret", secret: true, required: false },
    ],
  },
  adyen: {
    methods: ["card"],
    settings: [
      { name: "api_key", secret: true, required: true },
      { name: "merchant_account", secret: false, required: true },
      { name: "hmac_key", secret: true, required: false },
      { name: "live_url_prefix", secret: false, required: "live" },
    ],
  },
};

/** The API's complaints by field name (`name`, `settings.api_key`, …); the rest shown above the form. */
type FieldErrors = Record<string, string>;

/** Runs a change; a refusal's fields go beside the form's fields (and the message to the status line). */
async function withFieldErrors<T>(setErrors: (errors: FieldErrors) => void, work: () => Promise<T>) {
  setErrors({});
  try {
    return await work();
  } catch (failure) {
    if (failure instanceof ApiError) {
      const errors: FieldErrors = {};
      for (const field of failure.fields) errors[field.name] = field.message;
      if (failure.fields.length === 0) errors[""] = failure.message;
      setErrors(errors);
    }
    throw failure;
  }
}

/** Complaints naming no field shown in the form. */
function OtherErrors(props: { errors: FieldErrors; shown: string[] }) {
  const other = Object.entries(props.errors).filter(([name]) => !props.shown.includes(name));
  if (other.length === 0) return null;
  return html`<p class="error" role="alert">${other.map(([name, message]) => (name ? `${name}: ${message}` : message)).join("; ")}</p>`;
}

/** A refused form's first named field takes the focus (the keyboard is where the problem is). */
function useFocusOnError(errors: FieldErrors) {
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    form.current?.querySelector<HTMLElement>("[aria-invalid=true]")?.focus();
  }, [errors]);
  return form;
}

const currencyList = (value: string) =>
  value
    .split(",")
    .map((item) => item.trim().toUpperCase())
    .filter((item) => item !== "");

/** The gateway's settings as fields: public ones with their value, secret ones empty (write-only). */
function SettingFields(props: {
  gateway: string;
  values: Record<string, string>;
  errors: FieldErrors;
  editing: boolean;
  sandbox: boolean;
}) {
  const settings = (GATEWAY_CATALOGUE[props.gateway]?.settings ?? []).filter(
    (setting) => !(setting.required === "live" && props.sandbox),
  );
  return html`<fieldset class="settings">
    <legend>Settings</legend>
    ${settings.map(
      (setting) => html`<${Field}
        key=${`${props.gateway}-${setting.name}`}
        label=${`${setting.name}${setting.required === true || setting.required === "live" ? " (required)" : ""}`}
        name=${`settings.${setting.name}`}
        type=${setting.secret ? "password" : "text"}
        autocomplete="off"
        value=${setting.secret ? "" : (props.values[setting.name] ?? "")}
        error=${props.errors[`settings.${setting.name}`]}
        hint=${
          setting.secret
            ? props.editing
              ? "Secret: never shown. Leave empty to keep what is set."
              : "Secret: never shown again once saved."
            : undefined
        } />`,
    )}
  </fieldset>`;
}

/** The fields every configuration has: name, default currency, currencies, enabled. */
function CommonFields(props: { values: Json; errors: FieldErrors }) {
  return html`
    <${Field} label="Name" name="name" value=${props.values.name ?? ""} error=${props.errors.name} />
    <${Field} label="Default currency" name="default_currency" value=${props.values.default_currency ?? ""}
      error=${props.errors.default_currency} hint="ISO 4217, e.g. EUR; empty: none." />
    <${Field} label="Currencies taken" name="currencies" value=${(props.values.currencies ?? []).join(", ")}
      error=${props.errors.currencies ?? Object.entries(props.errors).find(([name]) => name.startsWith("currencies."))?.[1]}
      hint="Comma-separated; empty: every currency." />
    <${Field} label="Enabled" name="enabled" value=${props.values.enabled === false ? "false" : "true"}
      options=${[["true", "Yes: used for payments"], ["false", "No"]]} error=${props.errors.enabled} />`;
}

const COMMON_FIELDS = ["name", "default_currency", "currencies", "enabled"];
const shownFields = (gateway: string) => [
  ...COMMON_FIELDS,
  ...(GATEWAY_CATALOGUE[gateway]?.settings ?? []).map((setting) => `settings.${setting.name}`),
];

/** The settings a form changes: public ones that differ from what is set (empty removes), secret ones typed. */
function changedSettings(gateway: string, values: Record<string, string>, current: Record<string, string>) {
  const settings: Record<string, string> = {};
  for (const setting of GATEWAY_CATALOGUE[gateway]?.settings ?? []) {
    const value = values[`settings.${setting.name}`];
    if (value === undefined) continue;
    if (setting.secret ? value !== "" : value !== (current[setting.name] ?? ""))
      settings[setting.name] = value;
  }
  return settings;
}

function EditConfiguration(props: { configuration: Json; reload(): void }) {
  const { environment } = useApp();
  const { busy, run } = useAction();
  const [errors, setErrors] = useState<FieldErrors>({});
  const form = useFocusOnError(errors);
  const c = props.configuration;
  const label = c.name ?? c.id;
  const save = (event: Event) => {
    const values = formValues(event);
    const target = event.currentTarget as HTMLFormElement;
    run(() =>
      withFieldErrors(setErrors, async () => {
        const settings = changedSettings(c.gateway_name, values, c.settings ?? {});
        const answer = await put(`gateway-configurations/${c.id}`, {
          name: values.name ?? "",
          default_currency: values.default_currency || (c.default_currency ? null : undefined),
          currencies: currencyList(values.currencies ?? ""),
          enabled: values.enabled === "true",
          ...(Object.keys(settings).length > 0 ? { settings } : {}),
        });
        // Secrets typed are sent once, never kept in the page.
        for (const input of target.querySelectorAll<HTMLInputElement>("input[type=password]"))
          input.value = "";
        props.reload();
        return `${answer.gateway_configuration.name ?? c.id} saved.`;
      }),
    );
  };
  return html`<li class="event">
    <details>
      <summary>Edit “${label}” <span class="muted">(${c.gateway_name}, ${c.payment_method})</span></summary>
      <form ref=${form} onSubmit=${save} aria-label=${`Edit ${label}`} novalidate>
        <${OtherErrors} errors=${errors} shown=${shownFields(c.gateway_name)} />
        <${CommonFields} values=${c} errors=${errors} />
        <${SettingFields} gateway=${c.gateway_name} values=${c.settings ?? {}} errors=${errors} editing=${true}
          sandbox=${environment === "sandbox"} />
        <button type="submit" disabled=${busy}>Save ${label}</button>
      </form>
    </details>
  </li>`;
}

function CreateConfiguration(props: { reload(): void }) {
  const { environment } = useApp();
  const { busy, run } = useAction();
  const [errors, setErrors] = useState<FieldErrors>({});
  const form = useFocusOnError(errors);
  const [gateway, setGateway] = useState("sandbox");
  const methods = GATEWAY_CATALOGUE[gateway]?.methods ?? ["card"];
  const create = (event: Event) => {
    const values = formValues(event);
    const target = event.currentTarget as HTMLFormElement;
    run(() =>
      withFieldErrors(setErrors, async () => {
        const settings = changedSettings(gateway, values, {});
        const answer = await post(`gateways/${gateway}/gateway-configurations`, {
          payment_method: values.payment_method,
          ...(values.name ? { name: values.name } : {}),
          ...(values.default_currency ? { default_currency: values.default_currency } : {}),
          currencies: currencyList(values.currencies ?? ""),
          enabled: values.enabled === "true",
          settings,
        });
        target.reset();
        props.reload();
        return `${answer.gateway_configuration.name ?? answer.gateway_configuration.id} created.`;
      }),
    );
  };
  return html`<details>
    <summary>Add a configuration</summary>
    <form ref=${form} onSubmit=${create} aria-label="Add a gateway configuration" novalidate>
      <${OtherErrors} errors=${errors} shown=${["gateway", "payment_method", ...shownFields(gateway)]} />
      <${Field} label="Gateway" name="gateway" value=${gateway} onInput=${setGateway}
        options=${Object.keys(GATEWAY_CATALOGUE).map((name) => [name, name])} error=${errors.gateway} />
      <${Field} key=${gateway} label="Payment method" name="payment_method" value=${methods[0]}
        options=${methods.map((method) => [method, method])} error=${errors.payment_method} />
      <${CommonFields} values=${{ enabled: true }} errors=${errors} />
      <${SettingFields} gateway=${gateway} values=${{}} errors=${errors} editing=${false}
        sandbox=${environment === "sandbox"} />
      <button type="submit" disabled=${busy}>Add the configuration</button>
    </form>
  </details>`;
}

function Configurations() {
  const { session } = useApp();
  const load = useLoad("gateway-configurations?with_disabled=true");
  const { busy, run } = useAction();
  const allowed = may(session.role, "developers");
  const toggle = (c: Json) =>
    run(async () => {
      await put(`gateway-configurations/${c.id}`, { enabled: !c.enabled });
      load.reload();
      return `${c.name ?? c.id} ${c.enabled ? "disabled" : "enabled"}.`;
    });
  return html`<${Section} title="Gateway configurations">
    <${Loaded} load=${load}>${(data: Json) =>
      html`<${Table} label="Gateway configurations" head=${["Configuration", "Gateway", "Method", "Currencies", "Enabled", ""]}
        rows=${data.gateway_configurations.map((c: Json) => [
          html`${c.name ?? "—"}<br /><code>${c.id}</code>`,
          c.gateway_name,
          c.payment_method,
          (c.currencies ?? []).join(", ") || "all",
          c.enabled ? "yes" : "no",
          allowed
            ? html`<button type="button" class="small secondary" disabled=${busy} onClick=${() => toggle(c)}
                aria-label=${`${c.enabled ? "Disable" : "Enable"} ${c.name ?? c.id}`}>
                ${c.enabled ? "Disable" : "Enable"}</button>`
            : "",
        ])} empty="No gateway configuration." />
        ${
          allowed
            ? html`<ul class="events">${data.gateway_configurations.map(
                (c: Json) =>
                  html`<${EditConfiguration} key=${c.id} configuration=${c} reload=${load.reload} />`,
              )}</ul>
              <${CreateConfiguration} reload=${load.reload} />`
            : null
        }`}<//>
  <//>`;
}

function Routing() {
  const { session, environment } = useApp();
  const load = useLoad("routing-rules");
  const { busy, run } = useAction();
  const [explanation, setExplanation] = useState<Json | null>(null);
  const save = (event: Event) => {
    const { rules, version } = formValues(event);
    run(async () => {
      const parsed = JSON.parse(rules || "[]");
      const answer = await put("routing-rules", { version: Number(version), rules: parsed });
      load.reload();
      return `Routing rules saved (version ${answer.routing_rules.version}).`;
    });
  };
  const simulate = (event: Event) => {
    const { amount, currency, iin } = formValues(event);
    run(async () => {
      const answer = await post("routing-rules/simulate", { amount, currency, iin });
      setExplanation(answer.routing);
      return "Simulated.";
    });
  };
  return html`<${Section} title="Routing rules">
    <${Loaded} load=${load}>${(data: Json) => {
      const r = data.routing_rules;
      return html`<p>Default order: ${r.default_order.join(" → ") || "by creation"}. Version ${r.version}.</p>
        <form key=${`${environment}-${r.version}`} onSubmit=${save}>
          <input type="hidden" name="version" value=${r.version} />
          <div class="field"><label for="rules">Rules (JSON, first match wins)</label>
            ${
              // Uncontrolled: what is typed stays when the page renders again, until saved (a new
              // version draws the saved rules), reset (the form's reset restores them) or the other
              // environment shown (its own rules).
              html`<textarea id="rules" name="rules" rows="8" spellcheck=${false} defaultValue=${JSON.stringify(
                r.rules.map(({ id: _id, ...rule }: Json) => rule),
                null,
                2,
              )} />`
            }</div>
          <div class="row-actions">
            <button type="submit" disabled=${busy || !may(session.role, "developers")}>Save rules</button>
            <button type="reset" class="secondary">Reset to the saved rules</button>
          </div>
        </form>`;
    }}<//>
    <h3>Simulate a payment</h3>
    <form class="inline-form" onSubmit=${simulate}>
      <${Field} label="Amount" name="amount" value="25.00" inputmode="decimal" />
      <${Field} label="Currency" name="currency" value="EUR" />
      <${Field} label="Card IIN" name="iin" value="424242" inputmode="numeric" />
      <button type="submit" disabled=${busy}>Simulate</button>
    </form>
    ${
      explanation
        ? html`<p class="ok">Would go to ${explanation.chain.join(" → ") || "nowhere"} (${explanation.decided_by}${
            explanation.blocked ? `, blocked: ${explanation.blocked}` : ""
          }).</p>`
        : null
    }
  <//>`;
}

function Clock() {
  const { session, environment } = useApp();
  const load = useLoad(environment === "sandbox" ? "sandbox/clock" : null);
  const { busy, run } = useAction();
  if (environment !== "sandbox") return null;
  const advance = (event: Event) => {
    const { days } = formValues(event);
    run(async () => {
      const now = new Date((await get("sandbox/clock")).clock.now);
      const to = new Date(now.getTime() + Number(days || "0") * 86_400_000).toISOString();
      const answer = await post("sandbox/clock", { advance_to: to });
      load.reload();
      return `Clock at ${when(answer.clock.now)}: ${answer.jobs.length} jobs ran, ${answer.jobs_remaining} still due.`;
    });
  };
  return html`<${Section} title="Sandbox clock">
    <${Loaded} load=${load}>${(data: Json) => html`<p>Sandbox time: <strong>${when(data.clock.now)}</strong></p>`}<//>
    ${
      may(session.role, "developers")
        ? html`<form class="inline-form" onSubmit=${advance}>
      <${Field} label="Advance by days" name="days" value="1" inputmode="numeric" />
      <button type="submit" disabled=${busy}>Advance</button>
    </form>`
        : null
    }
  <//>`;
}

export function Developers() {
  return html`<h1>Developers</h1>
    <${ApiKeys} /><${Webhook} /><${Configurations} /><${Routing} /><${Clock} />`;
}
