import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The DynamoDB round trips of one unit of work (a request, a job), counted when something measures
 * them: the local stack does for every request it serves, and the benchmark reports the figures
 * per route. `calls` is every command sent; `sequential` counts the waits the caller sat through,
 * so calls sent together (`Promise.all`, a batch) count once, and background work started
 * outside the unit (stream fan-out, queue workers) counts nowhere.
 */
export interface RoundTrips {
  calls: number;
  sequential: number;
  inFlight: number;
  /** Commands the payment provider sent (the sandbox gateway keeps its records in the table). */
  providerCalls: number;
}

const meter = new AsyncLocalStorage<RoundTrips>();

/** Runs `work` with its DynamoDB round trips counted into `trips`. */
export function measuringRoundTrips<T>(trips: RoundTrips, work: () => Promise<T>): Promise<T> {
  return meter.run(trips, work);
}

/**
 * Stops following units of work until the next `measuringRoundTrips`: once one unit was measured,
 * the AsyncLocalStorage's hooks stay on and every promise of the process pays them.
 */
export function stopMeasuringRoundTrips(): void {
  meter.disable();
}

/** Called by the client for each command: counts it into the unit of work under way, if measured. */
export async function countedRoundTrip<T>(send: () => Promise<T>): Promise<T> {
  const trips = meter.getStore();
  if (!trips) return send();
  trips.calls += 1;
  if (trips.inFlight === 0) trips.sequential += 1;
  trips.inFlight += 1;
  try {
    return await send();
  } finally {
    trips.inFlight -= 1;
  }
}

/** A fresh counter. */
export function noRoundTrips(): RoundTrips {
  return { calls: 0, sequential: 0, inFlight: 0, providerCalls: 0 };
}

/**
 * Runs a call to a payment provider: the DynamoDB commands it sends (the sandbox gateway's own
 * records) count as the provider's, apart from the API's, as a real provider's HTTP call would.
 * The caller waits on the provider meanwhile: an API command sent while it is in flight (a
 * breaker's count beside a chained capture) is not a wait of its own.
 */
export async function asProviderCall<T>(call: () => Promise<T>): Promise<T> {
  const trips = meter.getStore();
  if (!trips) return call();
  const provider = noRoundTrips();
  trips.inFlight += 1;
  try {
    return await meter.run(provider, call);
  } finally {
    trips.inFlight -= 1;
    trips.providerCalls += provider.calls;
  }
}

/**
 * Runs work nothing on the request's path waits for (a best-effort record started beside it), outside
 * the unit of work under way: counted nowhere, as background work is.
 */
export function outsideRoundTrips<T>(work: () => T): T {
  return meter.exit(work);
}
