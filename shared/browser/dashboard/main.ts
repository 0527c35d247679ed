/**
 * The merchant dashboard (`GET /dashboard`): Preact and htm, routed by the URL's fragment
 * (`#/payments`), so the one page serves every screen. It reads and changes everything through the
 * API's own routes with the session cookie (`api.ts`); it sets the `ready` performance mark once
 * the first screen has its data (bench/dashboard-pages.ts reads it).
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { describe, type Environment, get, post, type SignedIn, setEnvironment, useSession } from "./api.ts";
import { Developers } from "./developers.ts";
import { Overview } from "./overview.ts";
import { Payment, Payments } from "./payments.ts";
import { Customer, Customers, Events, Subscriptions } from "./records.ts";
import { Accept, SignIn } from "./signin.ts";
import { Account, Audit, Team } from "./team.ts";
import { App, type AppContext, html } from "./ui.ts";

interface Route {
  path: string[];
  query: URLSearchParams;
}

function currentRoute(): Route {
  const hash = location.hash.startsWith("#/") ? location.hash.slice(2) : "";
  const [path = "", query = ""] = hash.split("?");
  return { path: path.split("/").filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(query) };
}

const NAV: { href: string; label: string; owner?: true }[] = [
  { href: "#/", label: "Overview" },
  { href: "#/payments", label: "Payments" },
  { href: "#/customers", label: "Customers" },
  { href: "#/subscriptions", label: "Subscriptions" },
  { href: "#/events", label: "Events" },
  { href: "#/developers", label: "Developers" },
  { href: "#/team", label: "Team", owner: true },
  { href: "#/audit", label: "Audit log", owner: true },
  { href: "#/account", label: "Account" },
];

const ENVIRONMENT_KEY = "dashboard.environment";

function Page(props: { route: Route }) {
  const [first = "", second] = props.route.path;
  switch (first) {
    case "":
      return html`<${Overview} />`;
    case "payments":
      return second ? html`<${Payment} id=${second} />` : html`<${Payments} query=${props.route.query} />`;
    case "customers":
      return second ? html`<${Customer} id=${second} />` : html`<${Customers} />`;
    case "subscriptions":
      return html`<${Subscriptions} />`;
    case "events":
      return html`<${Events} />`;
    case "developers":
      return html`<${Developers} />`;
    case "team":
      return html`<${Team} />`;
    case "audit":
      return html`<${Audit} />`;
    case "account":
      return html`<${Account} />`;
    default:
      return html`<h1>Not found</h1><p>No page is at this address. <a href="#/">Go to the overview</a>.</p>`;
  }
}

function Dashboard() {
  const [route, setRoute] = useState(currentRoute);
  const [signedIn, setSignedIn] = useState<SignedIn | null | undefined>(undefined);
  const [environment, setEnv] = useState<Environment>(
    sessionStorage.getItem(ENVIRONMENT_KEY) === "live" ? "live" : "sandbox",
  );
  const [notice, setNotice] = useState<{ kind: "ok" | "error"; text: string } | null>(null);

  setEnvironment(environment);
  useSession(signedIn?.session ?? null);

  useEffect(() => {
    const moved = () => {
      if (!location.hash.startsWith("#/") && location.hash !== "") return;
      setRoute(currentRoute());
      setNotice(null);
      document.getElementById("main")?.focus();
    };
    addEventListener("hashchange", moved);
    get("dashboard/session").then(
      (answer) => setSignedIn(answer as SignedIn),
      () => setSignedIn(null),
    );
    return () => removeEventListener("hashchange", moved);
  }, []);

  const accepted = (answer: SignedIn) => {
    setSignedIn(answer);
    if (route.path[0] === "accept") {
      // Replaced, not pushed: the link's token leaves the history, and no hashchange clears the notice.
      history.replaceState(null, "", "#/");
      setRoute(currentRoute());
    }
    setNotice({ kind: "ok", text: `Signed in as ${answer.user.email}.` });
  };

  if (signedIn === undefined) return html`<p class="muted" aria-live="polite">Loading…</p>`;
  if (route.path[0] === "accept") {
    return html`<${Accept} token=${route.query.get("token") ?? ""} onSignedIn=${accepted} />`;
  }
  if (signedIn === null || signedIn.session.second_factor === "required") {
    return html`<${SignIn} secondFactor=${signedIn?.session.second_factor === "required"} onSignedIn=${accepted} />`;
  }

  const { session, user } = signedIn;
  const choose = (next: Environment) => {
    if (next === "live" && session.second_factor !== "done") {
      setNotice({
        kind: "error",
        text: "Live needs a second factor: set up an authenticator app on the Account page, then sign in again with its code.",
      });
      return;
    }
    sessionStorage.setItem(ENVIRONMENT_KEY, next);
    setEnvironment(next);
    setEnv(next);
    setNotice({ kind: "ok", text: next === "live" ? "Now showing live data." : "Now showing sandbox data." });
  };
  const signOut = async (everywhere: boolean) => {
    try {
      await post(everywhere ? "dashboard/sign-out-everywhere" : "dashboard/sign-out");
      setSignedIn(null);
    } catch (failure) {
      setNotice({ kind: "error", text: describe(failure) });
    }
  };
  const context: AppContext = {
    session,
    user,
    environment,
    notify: (kind, text) => setNotice({ kind, text }),
    renew: (answer) => {
      useSession(answer.session);
      setSignedIn(answer);
    },
  };
  const here = `#/${route.path[0] ?? ""}`;
  const skip = (event: Event) => {
    event.preventDefault();
    document.getElementById("main")?.focus();
  };

  return html`<${App.Provider} value=${context}>
    <a class="skip" href="#main" onClick=${skip}>Skip to content</a>
    <header class=${`top env-${environment}`}>
      ${
        environment === "sandbox"
          ? html`<p class="band">Sandbox: test data, no real money moves</p>`
          : html`<p class="band band-live">Live: real payments</p>`
      }
      <div class="bar">
        <a class="brand" href="#/">Dashboard</a>
        <div class="switch" role="group" aria-label="Environment">
          ${(["sandbox", "live"] as const).map(
            (name) => html`<button type="button" aria-pressed=${environment === name}
              onClick=${() => choose(name)}>
              ${name === "sandbox" ? "Sandbox" : "Live"}</button>`,
          )}
        </div>
        <span class="who">${user.email} <span class="muted">(${session.role})</span></span>
        <button type="button" class="secondary" onClick=${() => signOut(false)}>Sign out</button>
      </div>
      <nav aria-label="Main">
        <ul>
          ${NAV.filter((item) => !item.owner || session.role === "owner").map(
            (item) =>
              html`<li><a href=${item.href} aria-current=${here === item.href ? "page" : undefined}>${item.label}</a></li>`,
          )}
        </ul>
      </nav>
    </header>
    <div class="status-line" role="status" aria-live="polite">
      ${notice ? html`<p class=${notice.kind === "ok" ? "ok" : "error"}>${notice.text}</p>` : null}
    </div>
    <main id="main" tabindex="-1">
      <${Page} route=${route} key=${`${environment}:${route.path.join("/")}`} />
      <p class="footer-actions"><button type="button" class="link" onClick=${() => signOut(true)}>Sign out everywhere</button></p>
    </main>
  <//>`;
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(html`<${Dashboard} />`, root);
}
