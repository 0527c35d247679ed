import { setTimeout as sleep } from "node:timers/promises";
import type { SettingDefinition } from "../catalogue.ts";

/**
 * Rehearsal: settings of a sandbox card configuration that make it misbehave as a provider does on
 * a bad day, so a merchant can watch routing cascade and a circuit breaker open and close in their
 * own sandbox before going live. Only sandbox environments take them.
 *
 * - `outage`: `true` refuses every operation as a provider that cannot be reached (nothing is done:
 *   the payment moves on to the next configuration of its chain, and the breaker counts a failure).
 * - `soft_decline_cards`: card numbers' last four digits or first six (comma-separated) this
 *   configuration declines softly (`card.do-not-honor`), as one acquirer may while another approves.
 * - `unknown_outcome_cards`: the same, for cards whose authorization is approved but whose answer is
 *   lost (a timeout after sending): the payment is not cascaded; `lookup` finds the approval later.
 * - `latency_ms`: added to every operation (0 to 10,000).
 */
export interface Rehearsal {
  outage: boolean;
  softDeclines: readonly string[];
  unknownOutcomes: readonly string[];
  latencyMs: number;
}

const MAX_LATENCY_MS = 10_000;
const CARD_PATTERN = /^(\d{4}|\d{6})$/;

const onlyInSandbox =
  (check: (value: string) => string | undefined) => (value: string, environment: { sandbox: boolean }) =>
    environment.sandbox ? check(value) : "is a rehearsal setting: only a sandbox environment takes it";

const cardList = (value: string) =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

export const REHEARSAL_SETTINGS: readonly SettingDefinition[] = [
  {
    name: "outage",
    secret: false,
    required: false,
    description:
      "Rehearsal: `true` makes the configuration unreachable (every operation fails, nothing is done).",
    check: onlyInSandbox((value) =>
      value === "true" || value === "false" ? undefined : "must be true or false",
    ),
  },
  {
    name: "soft_decline_cards",
    secret: false,
    required: false,
    description:
      "Rehearsal: cards (last four digits or first six, comma-separated) this configuration declines softly (card.do-not-honor).",
    check: onlyInSandbox((value) =>
      cardList(value).every((item) => CARD_PATTERN.test(item))
        ? undefined
        : "must list last-four or first-six digits",
    ),
  },
  {
    name: "unknown_outcome_cards",
    secret: false,
    required: false,
    description:
      "Rehearsal: cards (last four digits or first six) whose authorization is approved but whose answer is lost (a timeout).",
    check: onlyInSandbox((value) =>
      cardList(value).every((item) => CARD_PATTERN.test(item))
        ? undefined
        : "must list last-four or first-six digits",
    ),
  },
  {
    name: "latency_ms",
    secret: false,
    required: false,
    description: `Rehearsal: milliseconds added to every operation (0 to ${MAX_LATENCY_MS}).`,
    check: onlyInSandbox((value) =>
      /^\d+$/.test(value) && Number(value) <= MAX_LATENCY_MS
        ? undefined
        : `must be a whole number from 0 to ${MAX_LATENCY_MS}`,
    ),
  },
];

/** The rehearsal a configuration's settings ask for; undefined when they ask for none. */
export function rehearsalOf(settings: Readonly<Record<string, string>>): Rehearsal | undefined {
  const rehearsal: Rehearsal = {
    outage: settings.outage === "true",
    softDeclines: cardList(settings.soft_decline_cards ?? ""),
    unknownOutcomes: cardList(settings.unknown_outcome_cards ?? ""),
    latencyMs: Math.min(Number(settings.latency_ms ?? 0) || 0, MAX_LATENCY_MS),
  };
  const quiet =
    !rehearsal.outage &&
    rehearsal.softDeclines.length === 0 &&
    rehearsal.unknownOutcomes.length === 0 &&
    rehearsal.latencyMs === 0;
  return quiet ? undefined : rehearsal;
}

/** Whether a card number is one of a rehearsal list (its last four or first six digits). */
export function listed(list: readonly string[], number: string): boolean {
  return list.some((item) => (item.length === 4 ? number.endsWith(item) : number.startsWith(item)));
}

export async function delayed(rehearsal: Rehearsal | undefined): Promise<void> {
  if (rehearsal && rehearsal.latencyMs > 0) await sleep(rehearsal.latencyMs);
}
