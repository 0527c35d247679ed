import { randomInt } from "node:crypto";
import { ScanCommand, type ScanCommandOutput, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { passesLuhn } from "../../shared/cards/card-number.ts";
import { config } from "../../shared/config.ts";
import { dynamo } from "../../shared/db/client.ts";
import { logger } from "../../shared/observability/logger.ts";
import { api, useInProcessApi } from "../e2e/harness.ts";

/**
 * PCI DSS: no card number or CVC may be stored or logged in clear. Cards go through every path that
 * touches them (tokenization in JSON and form encoding, idempotent replays, refusals, verification,
 * declines, anonymization, an unexpected fault), with every log line captured at DEBUG level; then
 * every item of the table and every captured line is searched for them.
 */
const local = useInProcessApi("Card data security test");

/** A random card number of `prefix` and `length` digits that passes Luhn. */
function randomCardNumber(prefix: string, length: number): string {
  let body = prefix;
  while (body.length < length - 1) body += String(randomInt(10));
  for (let digit = 0; digit <= 9; digit++) if (passesLuhn(`${body}${digit}`)) return `${body}${digit}`;
  throw new Error("unreachable");
}

const CARDS = [
  { number: randomCardNumber("4", 16), cvc: "" },
  { number: randomCardNumber("37", 15), cvc: "" },
  { number: randomCardNumber("5", 16), cvc: "" },
  { number: "4242424242424242", cvc: "" },
  { number: "4000000000000028", cvc: "" },
  { number: "4000000000000002", cvc: "" },
];
/** Distinct random CVCs (4 digits for American Express), none equal to a card's last 4 digits. */
const used = new Set(CARDS.map((card) => card.number.slice(-4)));
for (const card of CARDS) {
  const digits = card.number.startsWith("37") ? 4 : 3;
  do card.cvc = String(randomInt(10 ** (digits - 1), 10 ** digits));
  while (used.has(card.cvc));
  used.add(card.cvc);
}
/** A number sent with a typo: refused, and no more stored or logged than a good one. */
const MISTYPED = (() => {
  const good = randomCardNumber("4", 16);
  return `${good.slice(0, -1)}${(Number(good.slice(-1)) + 1) % 10}`;
})();

const lines: string[] = [];

beforeAll(() => {
  const capture = (chunk: unknown, ...rest: unknown[]): boolean => {
    lines.push(typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"));
    const done = rest.find((argument) => typeof argument === "function") as (() => void) | undefined;
    done?.();
    return true;
  };
  vi.spyOn(process.stdout, "write").mockImplementation(capture);
  vi.spyOn(process.stderr, "write").mockImplementation(capture);
  for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) {
    vi.spyOn(console, method).mockImplementation((...values: unknown[]) => {
      lines.push(
        values.map((value) => (typeof value === "string" ? value : JSON.stringify(value))).join(" "),
      );
    });
  }
  logger.setLogLevel("DEBUG");
});

afterAll(() => {
  logger.setLogLevel("WARN");
  vi.restoreAllMocks();
});

async function scanTable(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: ScanCommandOutput["LastEvaluatedKey"];
  do {
    const page = await dynamo.send(
      new ScanCommand({ TableName: config.tableName, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Every string inside a value (an item, a parsed log line), however deep. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([key, inner]) => [key, ...strings(inner)]);
  }
  return [];
}

/** The ways a leaked number or CVC would show: the digits (written grouped or not), a CVC field or value. */
function leaks(text: string, values: readonly string[]): string[] {
  const found: string[] = [];
  const digits = text.replace(/[\s-]/g, "");
  for (const card of CARDS) {
    if (digits.includes(card.number)) found.push(`number ${card.number}`);
    if (text === card.cvc || new RegExp(`cvc2?[^0-9a-z]{0,6}${card.cvc}(?![0-9])`, "i").test(text)) {
      found.push(`CVC ${card.cvc}`);
    }
  }
  if (digits.includes(MISTYPED)) found.push(`mistyped number ${MISTYPED}`);
  return found.concat(
    values.filter((value) => CARDS.some((card) => value === card.cvc)).map((v) => `CVC ${v}`),
  );
}

describe("card data at rest and in logs", () => {
  it("never holds a card number or CVC in clear, in any stored attribute or any log line", async () => {
    const browser = api(local.url, { project_id: local.project.sandbox.project_id, private_key: "" });
    const { sandbox } = local;
    const cardIds: string[] = [];
    for (const [i, card] of CARDS.entries()) {
      const grouped = card.number.replace(/(\d{4})(?=\d)/g, i % 2 ? "$1 " : "$1-");
      const fields = {
        number: grouped,
        exp_month: "12",
        exp_year: "2031",
        [i % 2 ? "cvc" : "cvc2"]: card.cvc,
      };
      const answer =
        i % 2
          ? await browser.post("/cards", fields, { form: true, idempotencyKey: `security-${i}` })
          : await browser.post("/cards", fields, { idempotencyKey: `security-${i}` });
      expect(answer.status, answer.text).toBe(200);
      cardIds.push(answer.body.card.id);
      const replay = await browser.post("/cards", fields, {
        form: i % 2 === 1,
        idempotencyKey: `security-${i}`,
      });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      // Refusals of otherwise good card data: an expired card, a CVC of the wrong length.
      expect((await browser.post("/cards", { ...fields, exp_year: "2001" })).status).toBe(400);
      expect((await browser.post("/cards", { ...fields, cvc2: `${card.cvc}99` })).status).toBe(400);
    }
    expect(
      (await browser.post("/cards", { number: MISTYPED, exp_month: 1, exp_year: 2031, cvc2: "000" })).status,
    ).toBe(400);

    // An unexpected fault while storing a card is logged with its error.
    const send = dynamo.send.bind(dynamo);
    let faults = 1;
    const spy = vi.spyOn(dynamo, "send").mockImplementation(async (command) => {
      if (command instanceof TransactWriteCommand && faults-- > 0) throw new Error("injected fault");
      return send(command as never);
    });
    const [first] = CARDS;
    const faulted = await browser.post("/cards", {
      number: first?.number,
      exp_month: 1,
      exp_year: 2031,
      cvc2: first?.cvc,
    });
    expect(faulted.status).toBe(500);
    spy.mockRestore();

    // The secrets are opened to verify cards: approved and declined, at creation and on PUT.
    const customer = (await sandbox.post("/customers", {})).body.customer;
    for (const cardId of cardIds) {
      const created = await sandbox.post(`/customers/${customer.id}/tokens`, {
        source: cardId,
        verify: true,
      });
      expect([200, 410]).toContain(created.status);
      const pending = (await sandbox.post(`/customers/${customer.id}/tokens`, { verify: true })).body.token;
      await sandbox.put(`/customers/${customer.id}/tokens/${pending.id}`, { source: cardId });
    }
    for (const cardId of cardIds.slice(0, 2))
      expect((await sandbox.del(`/cards/${cardId}`)).status).toBe(200);

    expect(lines.length).toBeGreaterThan(0);
    const logLeaks = lines.flatMap((line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = undefined;
      }
      return leaks(line, strings(parsed)).map((leak) => `${leak} in log line ${line}`);
    });
    expect(logLeaks).toEqual([]);

    const items = await scanTable();
    expect(items.length).toBeGreaterThan(0);
    const ours = items.filter((item) => String(item.pk).startsWith(local.project.sandbox.project_id));
    expect(ours.filter((item) => item.type === "card")).toHaveLength(CARDS.length);
    // Card numbers and labelled CVCs are looked for in every item of the table; a CVC alone (three or
    // four digits) in this project's items only: the other tests running beside this one store short
    // numbers of their own (a payout line's "221"), which no card of this test could have put there.
    const projectIds = [local.project.sandbox.project_id, local.project.live.project_id];
    const storedLeaks = items.flatMap((item) =>
      leaks(
        JSON.stringify(item),
        projectIds.some((id) => String(item.pk).startsWith(id)) ? strings(item) : [],
      ).map((leak) => `${leak} in item ${String(item.pk)} ${String(item.sk)}`),
    );
    expect(storedLeaks).toEqual([]);
  });
});
