/** Payments: transactions and invoices with filters and search, and a payment's own page. */
import { useEffect, useState } from "preact/hooks";
import { get, type Json, may, post } from "./api.ts";
import { EventRow } from "./records.ts";
import {
  Field,
  formValues,
  html,
  Loaded,
  link,
  money,
  Section,
  status,
  Table,
  useAction,
  useApp,
  useLoad,
  when,
} from "./ui.ts";

const STATUSES = [
  "",
  "completed",
  "authorized",
  "pending",
  "failed",
  "voided",
  "refunded",
  "waiting",
  "blocked",
];

interface Filters {
  search: string;
  status: string;
  currency: string;
  configuration: string;
  from: string;
  to: string;
  min: string;
  max: string;
}
const NO_FILTER: Filters = {
  search: "",
  status: "",
  currency: "",
  configuration: "",
  from: "",
  to: "",
  min: "",
  max: "",
};

/**
 * What the server searches (`GET /search`): an id, a card's last four digits, an email. Anything
 * else typed in the box is looked for in what the page has read.
 */
function serverQuery(search: string): string | null {
  const query = search.trim();
  if (/^\d{4}$/.test(query) || /^(tr|iv|cust)_[0-9A-Za-z]+$/.test(query) || query.includes("@")) return query;
  return null;
}

/**
 * The list routes page by date only: the page reads the newest 100 (more on demand) with their card
 * and customer and filters those here, except a search the server answers (`serverQuery`), whose
 * transactions the other filters then narrow.
 */
function matches(item: Json, filters: Filters, searched: boolean): boolean {
  const search = searched ? "" : filters.search.trim().toLowerCase();
  if (search) {
    const haystack = [
      item.id,
      item.invoice_id,
      item.transaction_id,
      item.customer_id,
      item.customer?.email,
      item.card?.last_4_digits,
      item.name,
    ]
      .filter(Boolean)
      .map((value: string) => String(value).toLowerCase());
    if (!haystack.some((value) => value === search || value.includes(search))) return false;
  }
  if (filters.status && item.status !== filters.status) return false;
  if (filters.currency && item.currency !== filters.currency) return false;
  if (filters.configuration && item.gateway_configuration_id !== filters.configuration) return false;
  if (filters.from && item.created_at < filters.from) return false;
  if (filters.to && item.created_at.slice(0, 10) > filters.to) return false;
  if (filters.min && Number(item.amount) < Number(filters.min)) return false;
  if (filters.max && Number(item.amount) > Number(filters.max)) return false;
  return true;
}

function FilterForm(props: {
  items: Json[];
  filters: Filters;
  onChange: (filters: Filters) => void;
  transactions: boolean;
}) {
  const set = (name: keyof Filters) => (value: string) => props.onChange({ ...props.filters, [name]: value });
  const distinct = (field: string) =>
    [...new Set(props.items.map((item) => item[field]).filter(Boolean))].sort();
  const choices = (values: string[]): [string, string][] => [
    ["", "Any"],
    ...values.map((v): [string, string] => [v, v]),
  ];
  return html`<form class="filters" role="search" onSubmit=${(event: Event) => event.preventDefault()}>
    <${Field} label="Search" name="search" type="search" value=${props.filters.search} onInput=${set("search")}
      hint="An id, a customer's email or a card's last four digits" />
    ${
      props.transactions
        ? html`<${Field} label="Status" name="status" value=${props.filters.status} onInput=${set("status")}
      options=${STATUSES.map((s): [string, string] => [s, s || "Any"])} />`
        : null
    }
    <${Field} label="Currency" name="currency" value=${props.filters.currency} onInput=${set("currency")}
      options=${choices(distinct("currency"))} />
    ${
      props.transactions
        ? html`<${Field} label="Configuration" name="configuration" value=${props.filters.configuration}
      onInput=${set("configuration")} options=${choices(distinct("gateway_configuration_id"))} />`
        : null
    }
    <${Field} label="From" name="from" type="date" value=${props.filters.from} onInput=${set("from")} />
    <${Field} label="To" name="to" type="date" value=${props.filters.to} onInput=${set("to")} />
    <${Field} label="Amount at least" name="min" inputmode="decimal" value=${props.filters.min} onInput=${set("min")} />
    <${Field} label="Amount at most" name="max" inputmode="decimal" value=${props.filters.max} onInput=${set("max")} />
  </form>`;
}

export function Payments(props: { query: URLSearchParams }) {
  const [tab, setTab] = useState<"transactions" | "invoices">(
    props.query.get("tab") === "invoices" ? "invoices" : "transactions",
  );
  const [filters, setFilters] = useState<Filters>({ ...NO_FILTER, search: props.query.get("search") ?? "" });
  const path =
    tab === "transactions"
      ? "transactions?limit=100&expand=card,customer"
      : "invoices?limit=100&expand=customer";
  const load = useLoad(path);
  // A search the server answers, once the typing has paused.
  const [typed, setTyped] = useState(serverQuery(filters.search));
  useEffect(() => {
    const next = serverQuery(filters.search);
    const timer = setTimeout(() => setTyped(next), 300);
    return () => clearTimeout(timer);
  }, [filters.search]);
  const searched = tab === "transactions" ? typed : null;
  const found = useLoad(
    searched ? `search?query=${encodeURIComponent(searched)}&limit=100&expand=card,customer` : null,
  );
  // Older pages, read on demand: the filters apply to every item read so far.
  const [older, setOlder] = useState<{ items: Json[]; hasMore: boolean }>({ items: [], hasMore: true });
  const { busy, run } = useAction();
  const readOlder = (last: Json | undefined) =>
    run(async () => {
      if (!last) return undefined;
      const page = await get(`${path}&start_after=${encodeURIComponent(last.id)}`);
      setOlder({ items: [...older.items, ...page[tab]], hasMore: page.has_more });
      return undefined;
    });
  return html`<h1>Payments</h1>
    <div class="tabs" role="group" aria-label="Show">
      <button type="button" aria-pressed=${tab === "transactions"} onClick=${() => {
        setTab("transactions");
        setOlder({ items: [], hasMore: true });
      }}>Transactions</button>
      <button type="button" aria-pressed=${tab === "invoices"} onClick=${() => {
        setTab("invoices");
        setOlder({ items: [], hasMore: true });
      }}>Invoices</button>
    </div>
    <${Loaded} load=${searched ? found : load}>${(data: Json) => {
      const items: Json[] = searched ? (data.transactions ?? []) : [...(data[tab] ?? []), ...older.items];
      const hasMore = searched ? false : older.items.length > 0 ? older.hasMore : data.has_more;
      const shown = items.filter((item) => matches(item, filters, searched !== null));
      return html`<${FilterForm} items=${items} filters=${filters} onChange=${setFilters} transactions=${tab === "transactions"} />
        ${
          searched
            ? html`<p class="muted" aria-live="polite">${shown.length} of the ${items.length} transactions found for “${searched}”${items.length === 100 ? " (the newest 100)" : ""}.</p>`
            : html`<p class="muted" aria-live="polite">${shown.length} of the newest ${items.length} ${tab}${hasMore ? ` (of ${data.total_count})` : ""}.
          An id, a card's last four digits or an email are searched on the server; other filters apply to these.
          ${
            hasMore
              ? html` <button type="button" class="secondary small" disabled=${busy}
            onClick=${() => readOlder(items[items.length - 1])}>Read 100 older</button>`
              : null
          }</p>`
        }
        ${
          tab === "transactions"
            ? html`<${Table} label="Transactions" head=${["Transaction", "Status", "Amount", "Card", "Customer", "Configuration", "Created"]}
                rows=${shown.map((t) => [
                  link(`#/payments/${t.id}`, t.name || t.id),
                  status(t.status),
                  money(t.amount, t.currency),
                  t.card ? `${t.card.scheme} •••• ${t.card.last_4_digits}` : "—",
                  t.customer?.email ?? "—",
                  t.gateway_configuration_id,
                  when(t.created_at),
                ])} empty="No transaction matches." />`
            : html`<${Table} label="Invoices" head=${["Invoice", "Amount", "Customer", "Transaction", "Created"]}
                rows=${shown.map((i) => [
                  i.name || i.id,
                  money(i.amount, i.currency),
                  i.customer?.email ?? "—",
                  i.transaction_id ? link(`#/payments/${i.transaction_id}`, i.transaction_id) : "Not paid",
                  when(i.created_at),
                ])} empty="No invoice matches." />`
        }`;
    }}<//>`;
}

function Actions(props: { transaction: Json; reload: () => void }) {
  const { session } = useApp();
  const { busy, run } = useAction();
  const t = props.transaction;
  // What is left to refund, shown as a hint: the API decides, in exact decimals.
  const decimals = (String(t.captured_amount).split(".")[1] ?? "").length;
  const refundable = t.captured ? Number(t.captured_amount) - Number(t.refunded_amount) : 0;
  if (!may(session.role, "payments"))
    return html`<p class="muted">Your role (${session.role}) can read payments only.</p>`;
  const refund = (event: Event) => {
    const { amount, reason } = formValues(event);
    run(async () => {
      const answer = await post(`transactions/${t.id}/refunds`, {
        ...(amount ? { amount } : {}),
        ...(reason ? { reason } : {}),
      });
      props.reload();
      return `Refunded ${money(answer.refund.amount, t.currency)} (refund ${answer.refund.id}).`;
    });
  };
  const capture = () =>
    run(async () => {
      await post(`invoices/${t.invoice_id}/capture`, {});
      props.reload();
      return "Captured.";
    });
  const voidIt = () =>
    run(async () => {
      await post(`invoices/${t.invoice_id}/void`);
      props.reload();
      return "Voided.";
    });
  return html`<div class="actions">
    ${
      t.authorized && !t.captured && !t.voided
        ? html`<button type="button" onClick=${capture} disabled=${busy}>Capture</button>
      <button type="button" class="danger" onClick=${voidIt} disabled=${busy}>Void</button>`
        : null
    }
    ${
      refundable > 0
        ? html`<form class="inline-form" onSubmit=${refund} aria-label="Refund">
            <${Field} label=${`Refund amount (${t.currency}, at most ${refundable.toFixed(decimals)})`} name="amount" inputmode="decimal"
              hint="Empty: the whole amount available" />
            <${Field} label="Reason" name="reason" options=${[["", "None"], ["customer_request", "Customer request"], ["duplicate", "Duplicate"], ["fraud", "Fraud"]]} />
            <button type="submit" disabled=${busy}>Refund</button>
          </form>`
        : null
    }
  </div>`;
}

function Routing(props: { routing: Json | null }) {
  const r = props.routing;
  if (!r) return html`<p class="muted">No routing explanation (not a card payment routed by rules).</p>`;
  return html`<dl class="facts">
    <dt>Decided by</dt><dd>${r.decided_by}${r.rule ? ` (rule ${r.rule.position + 1}${r.rule.name ? `: ${r.rule.name}` : ""})` : ""}</dd>
    <dt>Chain</dt><dd>${r.chain.join(" → ") || "—"}</dd>
    ${r.split ? html`<dt>Split</dt><dd>${r.split.weights.map((w: Json) => `${w.gateway_configuration_id} ${w.weight}`).join(", ")}; drawn ${r.split.drawn ?? "—"}</dd>` : null}
    <dt>Skipped</dt><dd>${r.skipped.map((s: Json) => `${s.gateway_configuration_id}: ${s.reason}`).join("; ") || "none"}</dd>
    <dt>Card</dt><dd>${[r.facts.card_scheme, r.facts.card_type, r.facts.card_country].filter(Boolean).join(", ") || "—"}</dd>
    <dt>3-D Secure required</dt><dd>${r.require_three_d_s ? "yes" : "no"}</dd>
    ${r.blocked ? html`<dt>Blocked</dt><dd>${r.blocked}</dd>` : null}
  </dl>`;
}

export function Payment(props: { id: string }) {
  const load = useLoad(`transactions/${encodeURIComponent(props.id)}?expand=card,customer`);
  const events = useLoad(`events?transaction_id=${encodeURIComponent(props.id)}&limit=100`);
  return html`<p><a href="#/payments">← Payments</a></p>
    <${Loaded} load=${load}>${(data: Json) => {
      const t = data.transaction;
      const related: Json[] = events.data?.events ?? [];
      return html`<h1>${t.name || t.id}</h1>
        <dl class="facts">
          <dt>Status</dt><dd>${status(t.status)}</dd>
          <dt>Amount</dt><dd>${money(t.amount, t.currency)}</dd>
          <dt>Captured</dt><dd>${money(t.captured_amount, t.currency)}</dd>
          <dt>Refunded</dt><dd class="refunded">${money(t.refunded_amount, t.currency)}</dd>
          <dt>Card</dt><dd>${t.card ? `${t.card.scheme} •••• ${t.card.last_4_digits} (${t.card.exp_month}/${t.card.exp_year})` : "—"}</dd>
          <dt>Customer</dt><dd>${t.customer_id ? link(`#/customers/${t.customer_id}`, t.customer?.email ?? t.customer_id) : "—"}</dd>
          <dt>Transaction</dt><dd><code>${t.id}</code></dd>
          <dt>Invoice</dt><dd><code>${t.invoice_id}</code></dd>
          <dt>Created</dt><dd>${when(t.created_at)}</dd>
        </dl>
        <${Actions} transaction=${t} reload=${() => {
          load.reload();
          setTimeout(events.reload, 1500);
        }} />
        <${Section} title="Attempts">
          <${Table} label="Attempts" head=${["Configuration", "Gateway", "Outcome", "Error", "Cascade", "At"]}
            rows=${t.attempts.map((a: Json) => [
              a.gateway_configuration_id,
              a.gateway_name,
              a.outcome,
              a.error_code ? `${a.error_code}${a.decline ? ` (${a.decline})` : ""}` : "—",
              a.cascade ?? "—",
              when(a.at),
            ])}
            empty="No provider attempt." />
        <//>
        <${Section} title="Routing"><${Routing} routing=${t.routing} /><//>
        <${Section} title="Refunds">
          <${Table} label="Refunds" head=${["Refund", "Amount", "Reason", "Failed", "At"]}
            rows=${t.refunds.map((r: Json) => [r.id, money(r.amount, t.currency), r.reason ?? "—", r.has_failed ? "yes" : "no", when(r.created_at)])}
            empty="No refund." />
        <//>
        <${Section} title="Events and webhooks">
          <${Loaded} load=${events}>${() =>
            related.length === 0
              ? html`<p class="muted">No event yet.</p>`
              : html`<ul class="events">${related.map((event: Json) => html`<${EventRow} key=${event.id} event=${event} />`)}</ul>`}<//>
          <button type="button" class="secondary" onClick=${events.reload}>Refresh events</button>
        <//>`;
    }}<//>`;
}
