/** Developers: API keys, the webhook URL and its signing secret, gateway configurations, routing, the sandbox clock. */
import { useState } from "preact/hooks";
import { del, get, type Json, may, post, put } from "./api.ts";
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

function Configurations() {
  const { session } = useApp();
  const load = useLoad("gateway-configurations");
  const { busy, run } = useAction();
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
          may(session.role, "developers")
            ? html`<button type="button" class="small secondary" disabled=${busy} onClick=${() => toggle(c)}>
                ${c.enabled ? "Disable" : "Enable"}</button>`
            : "",
        ])} empty="No gateway configuration." />`}<//>
  <//>`;
}

function Routing() {
  const { session } = useApp();
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
        <form onSubmit=${save}>
          <input type="hidden" name="version" value=${r.version} />
          <div class="field"><label for="rules">Rules (JSON, first match wins)</label>
            <textarea id="rules" name="rules" rows="8" spellcheck=${false}>${JSON.stringify(
              r.rules.map(({ id: _id, ...rule }: Json) => rule),
              null,
              2,
            )}</textarea></div>
          <button type="submit" disabled=${busy || !may(session.role, "developers")}>Save rules</button>
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
