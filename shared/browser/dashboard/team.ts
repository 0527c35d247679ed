/** Team (users, invitations, roles) and the audit log, for owners; the user's own account (second factors). */
import { useEffect, useState } from "preact/hooks";
import { del, type Json, post, put, type SignedIn } from "./api.ts";
import { passkeyRegistration } from "./signin.ts";
import {
  Field,
  formValues,
  html,
  Loaded,
  markReady,
  Section,
  Table,
  useAction,
  useApp,
  useLoad,
  when,
} from "./ui.ts";

const ROLES: [string, string][] = [
  ["owner", "Owner"],
  ["developer", "Developer"],
  ["support", "Support"],
  ["read-only", "Read-only"],
];

const first = (data: Json, ...names: string[]) => names.map((name) => data[name]).find(Array.isArray) ?? [];

export function Team() {
  const { user } = useApp();
  const load = useLoad("dashboard/users");
  const { busy, run } = useAction();
  const [invitation, setInvitation] = useState<string | null>(null);
  const invite = (event: Event) => {
    const { email, role } = formValues(event);
    run(async () => {
      const answer = await post("dashboard/invitations", { email, role });
      setInvitation(answer.link);
      load.reload();
      return `Invitation for ${email} made: give them the link.`;
    });
  };
  const change = (member: Json, role: string) =>
    run(async () => {
      await put(`dashboard/users/${member.id}`, { role });
      load.reload();
      return `${member.email} is now ${role}.`;
    });
  const remove = (member: Json) =>
    run(async () => {
      await del(`dashboard/users/${member.id}`);
      load.reload();
      return `${member.email} removed.`;
    });
  return html`<h1>Team</h1>
    <${Section} title="Users">
      <${Loaded} load=${load}>${(data: Json) =>
        html`<${Table} label="Users" head=${["Email", "Role", "Second factor", "Last sign-in", ""]}
          rows=${first(data, "users").map((member: Json) => [
            member.email,
            member.id === user.id
              ? member.role
              : html`<${Field} label=${`Role of ${member.email}`} name="role" value=${member.role} options=${ROLES}
                  onInput=${(role: string) => change(member, role)} />`,
            member.totp_enrolled || member.second_factor ? "yes" : "no",
            when(member.last_sign_in_at),
            member.id === user.id
              ? ""
              : html`<button type="button" class="small danger" disabled=${busy}
              onClick=${() => remove(member)} aria-label=${`Remove ${member.email}`}>Remove</button>`,
          ])} />`}<//>
    <//>
    <${Section} title="Invite someone">
      <form class="inline-form" onSubmit=${invite}>
        <${Field} label="Email" name="email" type="email" required />
        <${Field} label="Role" name="role" value="support" options=${ROLES} />
        <button type="submit" disabled=${busy}>Invite</button>
      </form>
      ${invitation ? html`<p role="alert">Invitation link (no mail is sent: pass it on yourself): <code class="secret">${invitation}</code></p>` : null}
    <//>`;
}

export function Audit() {
  const load = useLoad("dashboard/audit-log");
  return html`<h1>Audit log</h1>
    <${Loaded} load=${load}>${(data: Json) =>
      html`<${Table} label="Audit log" head=${["When", "Who", "What", "From", "Outcome"]}
        rows=${first(data, "audit_log").map((entry: Json) => [
          when(entry.created_at),
          html`${entry.actor?.email ?? "—"}<br /><span class="muted">${entry.actor?.role ?? ""}</span>`,
          html`${entry.action}${entry.route ? html`<br /><code>${entry.route}</code>` : null}${
            entry.subject
              ? html`<br /><span class="muted">${entry.subject.type} ${entry.subject.id}</span>`
              : null
          }`,
          html`${entry.ip_address ?? "—"}<br /><span class="muted">${entry.user_agent ?? ""}</span>`,
          `${entry.outcome}${entry.status ? ` (${entry.status})` : ""}`,
        ])} empty="Nothing recorded yet." />`}<//>`;
}

/** The user's second factors: an authenticator app (TOTP) and passkeys. */
export function Account() {
  const { session, user, renew } = useApp();
  const { busy, run } = useAction();
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauth_uri: string } | null>(null);
  useEffect(markReady, []);
  const start = () =>
    run(async () => {
      const answer = await post("dashboard/totp");
      setEnrolment({ secret: answer.secret, otpauth_uri: answer.otpauth_uri });
      return "Add the key to your authenticator app, then enter the code it shows.";
    });
  const confirm = (event: Event) => {
    const { code } = formValues(event);
    run(async () => {
      const answer = await post("dashboard/totp/confirm", { code });
      setEnrolment(null);
      if (answer.session) renew(answer as SignedIn);
      return answer.session?.second_factor === "done"
        ? "Authenticator app set up: live data is open."
        : "Authenticator app set up: sign in again with its code to open live data.";
    });
  };
  const addPasskey = () =>
    run(async () => {
      const options = await post("dashboard/passkeys/options");
      const credential = await passkeyRegistration((options.options ?? options) as Record<string, unknown>);
      const answer = await post("dashboard/passkeys", { credential });
      if (answer.session) renew(answer as SignedIn);
      return "Passkey added: use it instead of a code when you sign in.";
    });
  return html`<h1>Account</h1>
    <dl class="facts"><dt>Email</dt><dd>${user.email}</dd><dt>Role</dt><dd>${session.role}</dd>
      <dt>Second factor</dt><dd>${session.second_factor}</dd><dt>Session ends</dt><dd>${when(session.expires_at)}</dd></dl>
    <${Section} title="Authenticator app">
      ${
        enrolment
          ? html`<p>Key: <code class="secret">${enrolment.secret}</code></p>
              <p class="muted"><a href=${enrolment.otpauth_uri}>Open in an authenticator app</a></p>
              <form class="inline-form" onSubmit=${confirm}>
                <${Field} label="Code from the app" name="code" required autocomplete="one-time-code" inputmode="numeric" />
                <button type="submit" disabled=${busy}>Confirm</button>
              </form>`
          : html`<button type="button" onClick=${start} disabled=${busy}>Set up an authenticator app</button>`
      }
    <//>
    <${Section} title="Passkeys">
      <p>${user.passkeys ? `${user.passkeys} passkey(s) registered.` : "No passkey yet."}</p>
      <button type="button" class="secondary" onClick=${addPasskey} disabled=${busy}>Add a passkey</button>
    <//>`;
}
