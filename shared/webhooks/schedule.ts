/**
 * When a failed webhook delivery is tried again: exponential backoff, from one minute and four
 * times longer after each failure, capped just under SQS's limit (a message can stay invisible for
 * at most 12 hours from the receive that hid it; 5 minutes are left for the attempt itself). The
 * schedule runs until the retries span at least three days:
 *
 *   attempt  1  at once
 *   attempt  2  +1 min         attempt  7  +11 h 55 min
 *   attempt  3  +4 min         attempt  8  +11 h 55 min
 *   attempt  4  +16 min        attempt  9  +11 h 55 min
 *   attempt  5  +1 h 4 min     attempt 10  +11 h 55 min
 *   attempt  6  +4 h 16 min    attempt 11  +11 h 55 min
 *                              attempt 12  +11 h 55 min
 *
 * 12 attempts over 3 days 5 h 11 min (277,860 s). The attempt number is the message's SQS receive
 * count, so the delivery queue's `maxReceiveCount` is {@link MAX_ATTEMPTS}: a message that fails its
 * last attempt moves to the dead-letter queue on its next receive.
 */
export const FIRST_RETRY_DELAY_SECONDS = 60;
export const BACKOFF_FACTOR = 4;
/** SQS's 12-hour visibility limit, less 5 minutes for the attempt that sets it. */
export const MAX_RETRY_DELAY_SECONDS = 12 * 3600 - 300;
/** The retries must span at least this long. */
export const MIN_RETRY_WINDOW_SECONDS = 3 * 24 * 3600;

function schedule(): readonly number[] {
  const delays: number[] = [];
  let total = 0;
  while (total < MIN_RETRY_WINDOW_SECONDS) {
    const delay = Math.min(
      FIRST_RETRY_DELAY_SECONDS * BACKOFF_FACTOR ** delays.length,
      MAX_RETRY_DELAY_SECONDS,
    );
    delays.push(delay);
    total += delay;
  }
  return Object.freeze(delays);
}

/** `RETRY_DELAYS_SECONDS[n - 1]`: how long after failed attempt `n` attempt `n + 1` happens. */
export const RETRY_DELAYS_SECONDS: readonly number[] = schedule();

/** Every attempt a delivery gets: the first, then one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** The delay after failed attempt `attempt` (1-based), or undefined when it was the last one. */
export function retryDelayAfter(attempt: number): number | undefined {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`Not an attempt number: ${attempt}`);
  return RETRY_DELAYS_SECONDS[attempt - 1];
}
