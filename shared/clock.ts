/**
 * The service's one source of the current time for decisions that depend on it (the 7-day capture
 * window, operation leases, `auto_capture_at`). Tests move time by replacing `clock.now`
 * (`vi.spyOn(clock, "now")`) instead of sleeping.
 */
export const clock = {
  now: (): Date => new Date(),
};
