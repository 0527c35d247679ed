/**
 * The service's one source of the current time for decisions that depend on it (the 7-day capture
 * window, operation leases, `auto_capture_at`, subscription renewals). Tests move time by replacing
 * `clock.now` (`vi.spyOn(clock, "now")`) instead of sleeping.
 */
export const clock = {
  now: (): Date => new Date(),
};

/** What an environment's business time depends on (see `nowIn`). */
export interface ClockedEnvironment {
  sandbox: boolean;
  /** A sandbox environment's clock, ahead of real time by this much (`POST /sandbox/clock`). */
  clock_offset_ms?: number;
}

/**
 * The business time of an environment: real time for live, and the environment's own clock for a
 * sandbox, which the merchant moves forward to test renewals without waiting (`shared/sandbox`).
 * Renewal dates, trial ends, dunning, `auto_capture_at` and the capture window read it. Leases and
 * retry delays are about processes, not business: they read `clock.now()` itself.
 */
export function nowIn(environment: ClockedEnvironment): Date {
  const now = clock.now();
  const offset = environment.sandbox ? (environment.clock_offset_ms ?? 0) : 0;
  return offset > 0 ? new Date(now.getTime() + offset) : now;
}
