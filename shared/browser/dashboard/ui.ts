/** The dashboard's small building blocks: loading, tables, forms, confirmations. */
import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { createContext } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";
import { describe, environment, get, type Json, type Session, type SignedIn, type User } from "./api.ts";

export { html };

export interface AppContext {
  session: Session;
  user: User;
  environment: "sandbox" | "live";
  /** Shows a confirmation or an error in the page's status line (read out by screen readers). */
  notify(kind: "ok" | "error", text: string): void;
  /** A change that replaced the session (second factor confirmed): its new id and CSRF token. */
  renew(answer: SignedIn): void;
}

export const App = createContext<AppContext>(null as unknown as AppContext);
export const useApp = () => useContext(App);

/** What a page read from the API: the answer, an error message, or neither while it loads. */
export function useLoad(path: string | null): {
  data: Json | null;
  error: string | null;
  reload(): void;
} {
  const [data, setData] = useState<Json | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  const env = environment();
  useEffect(() => {
    if (!path) return;
    let current = true;
    setError(null);
    get(path).then(
      (answer) => current && setData(answer),
      (failure) => current && setError(describe(failure)),
    );
    return () => {
      current = false;
    };
  }, [path, round, env]);
  return { data, error, reload: useCallback(() => setRound((n) => n + 1), []) };
}

/** Marks the moment the first screen shows its data (the `ready` mark, read by the page bench). */
export function markReady(): void {
  if (performance.getEntriesByName("ready").length === 0) performance.mark("ready");
}

/** A loaded answer's content, a loading line, or the API's error. */
export function Loaded(props: {
  load: { data: Json | null; error: string | null };
  children: (data: Json) => ComponentChildren;
}) {
  const settled = props.load.data !== null || props.load.error !== null;
  useEffect(() => {
    if (settled) markReady();
  }, [settled]);
  if (props.load.error) return html`<p class="error" role="alert">${props.load.error}</p>`;
  if (!props.load.data) return html`<p class="muted" aria-live="polite">Loading…</p>`;
  return props.children(props.load.data);
}

/** An action's button: busy while it runs; its answer goes to the status line. */
export function useAction() {
  const { notify } = useApp();
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<string | undefined>) => {
    setBusy(true);
    try {
      const done = await work();
      if (done) notify("ok", done);
      return true;
    } catch (failure) {
      notify("error", describe(failure));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, run };
}

export function Table(props: { label: string; head: string[]; rows: ComponentChildren[][]; empty?: string }) {
  if (props.rows.length === 0) return html`<p class="muted">${props.empty ?? "Nothing yet."}</p>`;
  return html`<div class="table-wrap" role="region" aria-label=${props.label} tabindex="0">
    <table>
      <caption class="visually-hidden">${props.label}</caption>
      <thead><tr>${props.head.map((name) => html`<th scope="col">${name}</th>`)}</tr></thead>
      <tbody>${props.rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody>
    </table>
  </div>`;
}

let fieldCount = 0;
/** A labelled input. */
export function Field(props: {
  label: string;
  name: string;
  value?: string;
  type?: string;
  required?: boolean;
  hint?: string;
  /** The API's complaint about this field (shown beside it, and read with it). */
  error?: string;
  autocomplete?: string;
  inputmode?: string;
  placeholder?: string;
  options?: [string, string][];
  onInput?: (value: string) => void;
}) {
  const id = useRef(`f${++fieldCount}-${props.name}`).current;
  const hintId = props.hint ? `${id}-hint` : undefined;
  const errorId = props.error ? `${id}-error` : undefined;
  // With `onInput` the page holds the value; without, what the user typed or chose stays when the page
  // renders again (a list loading beside the form must not reset it).
  const controlled = props.onInput !== undefined;
  const common = {
    id,
    name: props.name,
    required: props.required,
    "aria-describedby": [errorId, hintId].filter(Boolean).join(" ") || undefined,
    "aria-invalid": props.error ? "true" : undefined,
    onInput: (event: Event) => props.onInput?.((event.target as HTMLInputElement).value),
  };
  return html`<div class="field">
    <label for=${id}>${props.label}</label>
    ${
      props.options
        ? html`<select ...${common} ...${controlled ? { value: props.value ?? "" } : {}}>
            ${props.options.map(
              ([value, text]) =>
                html`<option value=${value} selected=${controlled ? undefined : value === (props.value ?? "")}>${text}</option>`,
            )}
          </select>`
        : html`<input ...${common} type=${props.type ?? "text"}
            ...${controlled ? { value: props.value } : { defaultValue: props.value }}
            autocomplete=${props.autocomplete} inputmode=${props.inputmode} placeholder=${props.placeholder} />`
    }
    ${errorId ? html`<small id=${errorId} class="error">${props.error}</small>` : null}
    ${hintId ? html`<small id=${hintId} class="muted">${props.hint}</small>` : null}
  </div>`;
}

/** A form's values by field name. */
export function formValues(event: Event): Record<string, string> {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  return Object.fromEntries([...new FormData(form)].map(([name, value]) => [name, String(value)]));
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "—");
export const money = (amount: string | null | undefined, currency: string | null | undefined) =>
  amount == null ? "—" : `${amount} ${currency ?? ""}`.trim();
export const link = (href: string, text: ComponentChildren) => html`<a href=${href}>${text}</a>`;
export const status = (value: string) => html`<span class=${`badge badge-${value}`}>${value}</span>`;

export function Section(props: { title: string; children: ComponentChildren }) {
  const id = `s-${props.title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  return html`<section class="card" aria-labelledby=${id}>
    <h2 id=${id}>${props.title}</h2>
    ${props.children}
  </section>`;
}
