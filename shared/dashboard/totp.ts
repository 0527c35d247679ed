import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { Secret, TOTP } from "otpauth";
import { cardVault, type SealContext, type SealedSecret } from "../cards/vault.ts";
import { config } from "../config.ts";
import { dynamo } from "../db/client.ts";
import { invalidField } from "../http/errors.ts";
import { dashboardKeys } from "./keys.ts";
import type { DashboardUser } from "./users.ts";

/**
 * TOTP (RFC 6238): SHA-1, 6 digits, 30-second steps, a code of the step before or after accepted
 * too (clock drift), and each step's code accepted once: the last step used is remembered, and a
 * code is only accepted for a later one, by a conditional write (two requests with one code: one
 * wins). The secret is sealed in the vault at rest (`shared/cards/vault.ts`: KMS in AWS, the local
 * key file otherwise), bound to its person; it is never answered again after enrolment, nor logged.
 */
const ISSUER = "Payment API dashboard";
const WINDOW = 1;

function totpOf(secret: string, email: string): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label: email,
    algorithm: "SHA1",
    digits: 6,
    period: 30,
    secret: Secret.fromBase32(secret),
  });
}

const CODE = /^[0-9]{6}$/;

/** What a person's TOTP secret is sealed under: it opens for that person only. */
const sealContext = (user: DashboardUser): SealContext => ({
  projectId: user.project_id,
  cardId: user.id,
  field: "setting:totp",
});

const openSecret = (user: DashboardUser, sealed: SealedSecret) => cardVault().open(sealed, sealContext(user));

/** The step `code` is valid for at `now` (within the window), or undefined. */
export function stepOf(secret: string, email: string, code: unknown, now: Date): number | undefined {
  if (typeof code !== "string" || !CODE.test(code)) return undefined;
  const totp = totpOf(secret, email);
  const timestamp = now.getTime();
  const delta = totp.validate({ token: code, timestamp, window: WINDOW });
  if (delta === null) return undefined;
  return totp.counter({ timestamp }) + delta;
}

/** A new secret to enrol, kept pending (sealed) on the person until a code confirms it. */
export async function startEnrolment(user: DashboardUser): Promise<{ secret: string; otpauth_uri: string }> {
  const secret = new Secret({ size: 20 }).base32;
  const sealed = await cardVault().seal(secret, sealContext(user));
  await dynamo.send(
    new UpdateCommand({
      TableName: config.tableName,
      Key: dashboardKeys.user(user.email),
      UpdateExpression: "SET totp_pending_secret = :secret",
      ConditionExpression: "id = :id",
      ExpressionAttributeValues: { ":secret": sealed, ":id": user.id },
    }),
  );
  return { secret, otpauth_uri: totpOf(secret, user.email).toString() };
}

const codeRefused = () =>
  invalidField("code", "is not a valid code now, or was used already", "invalid-code");

/** Confirms the pending secret with a code: it becomes the person's TOTP (still sealed). */
export async function confirmEnrolment(user: DashboardUser, code: unknown, now: Date): Promise<void> {
  const pending = user.totp_pending_secret;
  if (!pending) throw invalidField("code", "start with POST /dashboard/totp first", "no-enrolment");
  const step = stepOf(await openSecret(user, pending), user.email, code, now);
  if (step === undefined) throw codeRefused();
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: dashboardKeys.user(user.email),
        UpdateExpression: "SET totp_secret = :secret, totp_last_step = :step REMOVE totp_pending_secret",
        ConditionExpression: "totp_pending_secret.#data = :data",
        ExpressionAttributeNames: { "#data": "data" },
        ExpressionAttributeValues: { ":secret": pending, ":step": step, ":data": pending.data },
      }),
    );
  } catch (error) {
    if ((error as Error).name === "ConditionalCheckFailedException") throw codeRefused();
    throw error;
  }
}

/** Whether `code` is the person's code now, used for the first time (it is then used up). */
export async function useCode(user: DashboardUser, code: unknown, now: Date): Promise<boolean> {
  if (!user.totp_secret) return false;
  const step = stepOf(await openSecret(user, user.totp_secret), user.email, code, now);
  if (step === undefined || step <= (user.totp_last_step ?? -1)) return false;
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: config.tableName,
        Key: dashboardKeys.user(user.email),
        UpdateExpression: "SET totp_last_step = :step",
        ConditionExpression:
          "totp_secret.#data = :data AND (attribute_not_exists(totp_last_step) OR totp_last_step < :step)",
        ExpressionAttributeNames: { "#data": "data" },
        ExpressionAttributeValues: { ":step": step, ":data": user.totp_secret.data },
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === "ConditionalCheckFailedException") return false;
    throw error;
  }
}
