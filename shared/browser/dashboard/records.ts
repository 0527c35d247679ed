/** Customers with their tokens and subscriptions; plans and subscriptions; events and their webhooks. */
import { useState } from "preact/hooks";
import { del, get, type Json, may, post, put } from "./api.ts";
import { html, Loaded, link, money, Section, status, Table, useAction, useApp, useLoad, when } from "./ui.ts";

export function Customers() {
  const load = useLoad("customers?limit=100");
  return html`<h1>Customers</h1>
    <${Loaded} load=${load}>${(data: Json) =>
      html`<${Table} label="Customers" head=${["Customer", "Email", "Balance", "Created"]}
        rows=${data.customers.map((c: Json) => [
          link(`#/customers/${c.id}`, [c.first_name, c.last_name].filter(Boolean).join(" ") || c.id),
          c.email ?? "—",
          money(c.balance, c.currency),
          when(c.created_at),
        ])} empty="No customer yet." />`}<//>`;
}

export function Customer(props: { id: string }) {
  const load = useLoad(`customers/${encodeURIComponent(props.id)}?expand=tokens,subscriptions`);
  return html`<p><a href="#/customers">← Customers</a></p>
    <${Loaded} load=${load}>${(data: Json) => {
      const c = data.customer;
      return html`<h1>${[c.first_name, c.last_name].filter(Boolean).join(" ") || c.id}</h1>
        <dl class="facts"><dt>Email</dt><dd>${c.email ?? "—"}</dd><dt>Id</dt><dd><code>${c.id}</code></dd>
          <dt>Balance</dt><dd>${money(c.balance, c.currency)}</dd></dl>
        <${Section} title="Tokens">
          <${Table} label="Tokens" head=${["Token", "Type", "Card", "Default", "Created"]}
            rows=${(c.tokens ?? []).map((t: Json) => [
              t.id,
              t.type,
              t.card ? `${t.card.scheme} •••• ${t.card.last_4_digits}` : "—",
              t.is_default ? "yes" : "no",
              when(t.created_at),
            ])}
            empty="No token." />
        <//>
        <${Section} title="Subscriptions">
          <${SubscriptionTable} subscriptions=${c.subscriptions ?? []} reload=${load.reload} />
        <//>`;
    }}<//>`;
}

function SubscriptionTable(props: { subscriptions: Json[]; reload: () => void }) {
  const { session } = useApp();
  const { busy, run } = useAction();
  const cancel = (s: Json) =>
    run(async () => {
      await del(`subscriptions/${s.id}`);
      props.reload();
      return `Subscription ${s.name || s.id} cancelled.`;
    });
  // The trial ends now: the first iteration is charged at once (the answer says whether it was).
  const endTrial = (s: Json) =>
    run(async () => {
      const answer = await put(`subscriptions/${s.id}`, { trial_end_at: "now" });
      props.reload();
      const after = answer.subscription;
      return after?.iterations > 0
        ? `Trial of ${s.name || s.id} ended: its first charge of ${money(after.amount, after.currency)} went through.`
        : `Trial of ${s.name || s.id} ended: its first charge did not go through yet (see its payments).`;
    });
  // In its trial by the environment's clock (the server's `active` before any charge).
  const inTrial = (s: Json) => s.active && !s.activated && !s.past_due && s.trial_end_at !== null;
  return html`<${Table} label="Subscriptions" head=${["Subscription", "Amount", "Every", "Trial ends", "State", ""]}
    rows=${props.subscriptions.map((s: Json) => [
      s.name || s.id,
      money(s.amount, s.currency),
      s.interval,
      when(s.trial_end_at),
      s.canceled
        ? "cancelled"
        : s.pending_cancellation
          ? `ends ${when(s.cancel_at)}`
          : s.active
            ? "active"
            : "inactive",
      !s.canceled && may(session.role, "subscriptions")
        ? html`${
            inTrial(s)
              ? html`<button type="button" class="secondary small" disabled=${busy} onClick=${() => endTrial(s)}
                  aria-label=${`End the trial of subscription ${s.name || s.id} now`}>End trial now</button> `
              : ""
          }<button type="button" class="danger small" disabled=${busy} onClick=${() => cancel(s)}
            aria-label=${`Cancel subscription ${s.name || s.id}`}>Cancel</button>`
        : "",
    ])} empty="No subscription." />`;
}

export function Subscriptions() {
  const subscriptions = useLoad("subscriptions?limit=100");
  const plans = useLoad("plans?limit=100");
  return html`<h1>Plans and subscriptions</h1>
    <${Section} title="Subscriptions">
      <${Loaded} load=${subscriptions}>${(data: Json) =>
        html`<${SubscriptionTable} subscriptions=${data.subscriptions} reload=${subscriptions.reload} />`}<//>
      <p class="muted">A trial ends at its date, or now with “End trial now”: its first iteration is then charged at once.</p>
    <//>
    <${Section} title="Plans">
      <${Loaded} load=${plans}>${(data: Json) =>
        html`<${Table} label="Plans" head=${["Plan", "Amount", "Every", "Trial", "Created"]}
          rows=${data.plans.map((p: Json) => [p.name || p.id, money(p.amount, p.currency), p.interval, p.trial_period ?? "—", when(p.created_at)])}
          empty="No plan yet." />`}<//>
    <//>`;
}

/** An event, its webhook deliveries (read when opened) and a resend button. */
export function EventRow(props: { event: Json }) {
  const { session } = useApp();
  const { busy, run } = useAction();
  const [webhooks, setWebhooks] = useState<Json | null>(null);
  const e = props.event;
  const show = async () =>
    setWebhooks(await get(`events/${e.id}/webhooks`).catch(() => ({ webhooks: [], deliveries: [] })));
  const resend = () =>
    run(async () => {
      await post(`events/${e.id}/webhooks`);
      setTimeout(show, 1500);
      return `Event ${e.name} sent again.`;
    });
  return html`<li class="event">
    <details onToggle=${(event: Event) => (event.currentTarget as HTMLDetailsElement).open && show()}>
      <summary><strong>${e.name}</strong> <span class="muted">${when(e.fired_at)}</span></summary>
      <p><code>${e.id}</code></p>
      ${
        webhooks
          ? html`<${Table} label=${`Webhook deliveries of ${e.name}`} head=${["Destination", "Status", "Attempts", "Delivered"]}
              rows=${webhooks.deliveries.map((d: Json) => [d.url ?? d.destination, status(d.status), String(d.attempts ?? "—"), when(d.delivered_at)])}
              empty="No webhook delivery (no webhook URL was set then)." />`
          : html`<p class="muted">Loading deliveries…</p>`
      }
      ${may(session.role, "webhooks") ? html`<button type="button" class="secondary small" disabled=${busy} onClick=${resend}>Resend</button>` : null}
    </details>
  </li>`;
}

export function Events() {
  const load = useLoad("events?limit=100");
  return html`<h1>Events</h1>
    <p class="muted">Open an event to see its webhook deliveries.</p>
    <${Loaded} load=${load}>${(data: Json) =>
      data.events.length === 0
        ? html`<p class="muted">No event yet.</p>`
        : html`<ul class="events">${data.events.map((event: Json) => html`<${EventRow} key=${event.id} event=${event} />`)}</ul>`}<//>`;
}
