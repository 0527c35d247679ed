import type { ItemKey } from "../db/keys.ts";

/**
 * Key formats of the dashboard's items (people, sessions, one-time tokens, the audit log). A
 * project's items are under its root project id (`proj_…`, the parent of its sandbox and live
 * environments); what sign-in must find before the project is known (a user by email, a token by
 * its hash, a passkey by its credential id) has a partition of its own kind, which no environment
 * id (`proj_…`, `test-proj_…`) can ever start with.
 */
export const dashboardKeys = {
  /** A person, by their email (lower case): unique across the stage, found in one read at sign-in. */
  user: (email: string): ItemKey => ({ pk: `dashboard-user#${email}`, sk: "user" }),
  /** The listing index partition of a project's people (`gsi1`, by user id). */
  usersOf: (rootProjectId: string) => `${rootProjectId}#dashboard-users`,
  /** A session, by the SHA-256 of its secret, in its user's partition (sign-out everywhere reads it). */
  session: (rootProjectId: string, userId: string, secretHash: string): ItemKey => ({
    pk: `${rootProjectId}#dashboard-sessions#${userId}`,
    sk: `session#${secretHash}`,
  }),
  sessionsOf: (rootProjectId: string, userId: string) => `${rootProjectId}#dashboard-sessions#${userId}`,
  /** A one-time token (an invitation, a sign-in link), by the SHA-256 of the token. */
  token: (tokenHash: string): ItemKey => ({ pk: `dashboard-token#${tokenHash}`, sk: "token" }),
  /** Failed sign-ins of an email no user has: counted as a user's are, so answers tell nothing apart. */
  emailFailures: (email: string): ItemKey => ({ pk: `dashboard-failures#${email}`, sk: "failures" }),
  /** A project's audit log: one partition, newest first by id. */
  audit: (rootProjectId: string, id: string): ItemKey => ({ pk: `${rootProjectId}#dashboard-audit`, sk: id }),
  auditOf: (rootProjectId: string) => `${rootProjectId}#dashboard-audit`,
  /** A passkey, by its credential id (base64url). */
  passkey: (credentialId: string): ItemKey => ({ pk: `dashboard-passkey#${credentialId}`, sk: "passkey" }),
};

/** Epoch seconds (the table's TTL attribute `expires_at`). */
export const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);
