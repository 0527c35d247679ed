/** Signing in: email and password, then a TOTP code or a passkey; an invitation's or link's token. */
import { useEffect, useState } from "preact/hooks";
import { describe, post, type SignedIn } from "./api.ts";
import { Field, formValues, html, markReady } from "./ui.ts";

function base64url(bytes: ArrayBuffer): string {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function fromBase64url(text: string): ArrayBuffer {
  const plain = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(plain.length);
  for (let i = 0; i < plain.length; i++) bytes[i] = plain.charCodeAt(i);
  return bytes.buffer;
}

/** A passkey's assertion for the server's options (WebAuthn's JSON shapes, as @simplewebauthn's). */
async function passkeyAssertion(options: Record<string, unknown>) {
  const publicKey = options as unknown as Omit<
    PublicKeyCredentialRequestOptions,
    "challenge" | "allowCredentials"
  > & {
    challenge: string;
    allowCredentials?: { id: string; type: "public-key"; transports?: AuthenticatorTransport[] }[];
  };
  const credential = (await navigator.credentials.get({
    publicKey: {
      ...publicKey,
      challenge: fromBase64url(publicKey.challenge),
      allowCredentials: publicKey.allowCredentials?.map((allowed) => ({
        ...allowed,
        id: fromBase64url(allowed.id),
      })),
    },
  })) as PublicKeyCredential | null;
  if (!credential) throw new Error("No passkey was chosen.");
  const response = credential.response as AuthenticatorAssertionResponse;
  return {
    id: credential.id,
    rawId: base64url(credential.rawId),
    type: credential.type,
    clientExtensionResults: credential.getClientExtensionResults(),
    response: {
      clientDataJSON: base64url(response.clientDataJSON),
      authenticatorData: base64url(response.authenticatorData),
      signature: base64url(response.signature),
      userHandle: response.userHandle ? base64url(response.userHandle) : undefined,
    },
  };
}

/** A new passkey for the server's creation options, as the registration's JSON (@simplewebauthn's shape). */
export async function passkeyRegistration(options: Record<string, unknown>) {
  const publicKey = options as unknown as Omit<
    PublicKeyCredentialCreationOptions,
    "challenge" | "user" | "excludeCredentials"
  > & {
    challenge: string;
    user: { id: string; name: string; displayName: string };
    excludeCredentials?: { id: string; type: "public-key"; transports?: AuthenticatorTransport[] }[];
  };
  const credential = (await navigator.credentials.create({
    publicKey: {
      ...publicKey,
      challenge: fromBase64url(publicKey.challenge),
      user: { ...publicKey.user, id: fromBase64url(publicKey.user.id) },
      excludeCredentials: publicKey.excludeCredentials?.map((excluded) => ({
        ...excluded,
        id: fromBase64url(excluded.id),
      })),
    },
  })) as PublicKeyCredential | null;
  if (!credential) throw new Error("No passkey was made.");
  const response = credential.response as AuthenticatorAttestationResponse;
  return {
    id: credential.id,
    rawId: base64url(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults(),
    response: {
      clientDataJSON: base64url(response.clientDataJSON),
      attestationObject: base64url(response.attestationObject),
      transports: response.getTransports?.() ?? [],
    },
  };
}

function Errors(props: { error: string | null }) {
  return props.error ? html`<p class="error" role="alert">${props.error}</p>` : null;
}

/** Step one (email and password), or step two when the session waits for its second factor. */
export function SignIn(props: { secondFactor: boolean; onSignedIn: (answer: SignedIn) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(markReady, []);
  // The second step's field takes the focus, so the keyboard goes on where the first step ended.
  useEffect(() => {
    if (props.secondFactor) document.querySelector<HTMLInputElement>("input[name=code]")?.focus();
  }, [props.secondFactor]);
  const attempt = async (work: () => Promise<SignedIn>) => {
    setBusy(true);
    setError(null);
    try {
      props.onSignedIn(await work());
    } catch (failure) {
      setError(describe(failure));
    } finally {
      setBusy(false);
    }
  };
  const password = (event: Event) => {
    const { email, password } = formValues(event);
    attempt(async () => (await post("dashboard/sign-in", { email, password })) as SignedIn);
  };
  const totp = (event: Event) => {
    const { code } = formValues(event);
    attempt(
      async () => (await post("dashboard/sign-in/totp", { code: code?.replace(/\s/g, "") })) as SignedIn,
    );
  };
  const passkey = () =>
    attempt(async () => {
      const options = await post("dashboard/sign-in/passkey/options");
      const credential = await passkeyAssertion((options.options ?? options) as Record<string, unknown>);
      return (await post("dashboard/sign-in/passkey", { credential })) as SignedIn;
    });

  return html`<main id="main" class="signin" tabindex="-1">
    <h1>Sign in to the dashboard</h1>
    ${
      props.secondFactor
        ? html`<form key="code" onSubmit=${totp} aria-describedby="totp-help">
            <p id="totp-help">Enter the 6-digit code your authenticator app shows, or use a passkey.</p>
            <${Field} label="Authentication code" name="code" required autocomplete="one-time-code" inputmode="numeric" />
            <${Errors} error=${error} />
            <button type="submit" disabled=${busy}>Verify code</button>
            <button type="button" class="secondary" onClick=${passkey} disabled=${busy}>Use a passkey</button>
          </form>`
        : html`<form key="password" onSubmit=${password}>
            <${Field} label="Email" name="email" type="email" required autocomplete="username" />
            <${Field} label="Password" name="password" type="password" required autocomplete="current-password" />
            <${Errors} error=${error} />
            <button type="submit" disabled=${busy}>Sign in</button>
          </form>`
    }
  </main>`;
}

/** `#/accept?token=…`: an invitation or a one-time sign-in link; the user chooses a password. */
export function Accept(props: { token: string; onSignedIn: (answer: SignedIn) => void }) {
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    const { password, confirm } = formValues(event);
    if (password !== confirm) return setError("The two passwords differ.");
    try {
      props.onSignedIn((await post("dashboard/accept", { token: props.token, password })) as SignedIn);
    } catch (failure) {
      setError(describe(failure));
    }
  };
  return html`<main id="main" class="signin" tabindex="-1">
    <h1>Choose your password</h1>
    <form onSubmit=${submit}>
      <${Field} label="New password" name="password" type="password" required autocomplete="new-password"
        hint="At least 12 characters." />
      <${Field} label="Repeat the password" name="confirm" type="password" required autocomplete="new-password" />
      <${Errors} error=${error} />
      <button type="submit">Set the password and sign in</button>
    </form>
  </main>`;
}
