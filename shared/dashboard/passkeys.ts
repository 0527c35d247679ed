import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { transactWrite } from "../db/transactions.ts";
import { invalidField } from "../http/errors.ts";
import type { DashboardRequest } from "./http.ts";
import { dashboardKeys } from "./keys.ts";
import type { LoadedSession } from "./sessions.ts";
import type { DashboardUser } from "./users.ts";

/**
 * Passkeys (WebAuthn, `@simplewebauthn/server`), a second factor beside TOTP: registered from a
 * signed-in session, given after the password. The challenge is kept on the session item (5
 * minutes, used once). The relying party is the host the browser reached (`DASHBOARD_RP_ID` and
 * `DASHBOARD_ORIGIN` override it, for a custom domain in front of the API). Only the dashboard's
 * passkey functions load this module.
 */
const RP_NAME = "Payment API dashboard";
const CHALLENGE_MS = 5 * 60_000;

interface StoredPasskey {
  id: string;
  public_key: string;
  counter: number;
  transports: string[];
  user_id: string;
  email: string;
  project_id: string;
  created_at: string;
}

function relyingParty(request: DashboardRequest) {
  const origin = process.env.DASHBOARD_ORIGIN ?? request.baseUrl;
  const rpID = process.env.DASHBOARD_RP_ID ?? new URL(origin).hostname;
  return { origin, rpID };
}

async function keepChallenge(session: LoadedSession, challenge: string, now: Date) {
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: dashboardKeys.session(session.project_id, session.user_id, session.secret_hash),
      UpdateExpression: "SET webauthn_challenge = :challenge, webauthn_challenge_at = :at",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeValues: { ":challenge": challenge, ":at": now.toISOString() },
    }),
  );
}

const refused = () => invalidField("credential", "could not be verified", "invalid-credential");

/** Takes the session's challenge, once: a second use of it finds none. */
async function takeChallenge(session: LoadedSession, now: Date): Promise<string> {
  const challenge = session.webauthn_challenge;
  const at = session.webauthn_challenge_at ? Date.parse(session.webauthn_challenge_at) : 0;
  if (!challenge || now.getTime() - at > CHALLENGE_MS) throw refused();
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: dashboardKeys.session(session.project_id, session.user_id, session.secret_hash),
        UpdateExpression: "REMOVE webauthn_challenge, webauthn_challenge_at",
        ConditionExpression: "webauthn_challenge = :challenge",
        ExpressionAttributeValues: { ":challenge": challenge },
      }),
    );
  } catch (error) {
    if ((error as Error).name === "ConditionalCheckFailedException") throw refused();
    throw error;
  }
  return challenge;
}

export async function registrationOptions(request: DashboardRequest, user: DashboardUser) {
  const { rpID } = relyingParty(request);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID,
    userName: user.email,
    userID: new TextEncoder().encode(user.id),
    attestationType: "none",
    excludeCredentials: (user.passkey_ids ?? []).map((id) => ({ id })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
  });
  await keepChallenge(request.session, options.challenge, request.now);
  return options;
}

export async function register(request: DashboardRequest, user: DashboardUser, credential: unknown) {
  const { origin, rpID } = relyingParty(request);
  const expectedChallenge = await takeChallenge(request.session, request.now);
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response: credential as RegistrationResponseJSON,
      expectedChallenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: false,
    });
  } catch {
    throw refused();
  }
  if (!verified.verified) throw refused();
  const { credential: made } = verified.registrationInfo;
  const stored: StoredPasskey = {
    id: made.id,
    public_key: Buffer.from(made.publicKey).toString("base64url"),
    counter: made.counter,
    transports: made.transports ?? [],
    user_id: user.id,
    email: user.email,
    project_id: user.project_id,
    created_at: request.now.toISOString(),
  };
  await transactWrite([
    {
      Put: {
        TableName: config.tableName,
        Item: { ...dashboardKeys.passkey(made.id), type: "dashboard_passkey", ...stored },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    },
    {
      Update: {
        TableName: config.tableName,
        Key: dashboardKeys.user(user.email),
        UpdateExpression: "SET passkey_ids = list_append(if_not_exists(passkey_ids, :none), :id)",
        ConditionExpression: "id = :user",
        ExpressionAttributeValues: { ":none": [], ":id": [made.id], ":user": user.id },
      },
    },
  ]);
  return { ...user, passkey_ids: [...(user.passkey_ids ?? []), made.id] };
}

export async function authenticationOptions(request: DashboardRequest, user: DashboardUser) {
  const { rpID } = relyingParty(request);
  const options = await generateAuthenticationOptions({
    rpID,
    allowCredentials: (user.passkey_ids ?? []).map((id) => ({ id })),
    userVerification: "preferred",
  });
  await keepChallenge(request.session, options.challenge, request.now);
  return options;
}

/** Whether `credential` is an assertion of one of the person's passkeys for the session's challenge. */
export async function verifyPasskey(
  request: DashboardRequest,
  user: DashboardUser,
  credential: unknown,
): Promise<boolean> {
  const response = credential as AuthenticationResponseJSON;
  if (typeof response?.id !== "string" || !(user.passkey_ids ?? []).includes(response.id)) return false;
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: config.tableName,
      Key: dashboardKeys.passkey(response.id),
      ConsistentRead: true,
    }),
  );
  const passkey = Item as unknown as StoredPasskey | undefined;
  if (!passkey || passkey.user_id !== user.id) return false;
  const { origin, rpID } = relyingParty(request);
  const expectedChallenge = await takeChallenge(request.session, request.now);
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: {
        id: passkey.id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, "base64url")),
        counter: passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: false,
    });
  } catch {
    return false;
  }
  if (!verified.verified) return false;
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: dashboardKeys.passkey(passkey.id),
      UpdateExpression: "SET #counter = :counter, last_used_at = :at",
      ExpressionAttributeNames: { "#counter": "counter" },
      ExpressionAttributeValues: {
        ":counter": verified.authenticationInfo.newCounter,
        ":at": request.now.toISOString(),
      },
    }),
  );
  return true;
}
