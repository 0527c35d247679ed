/**
 * Webhook figures on the local stack: how long from the commit of an event to its signed POST
 * reaching a receiver (the stream poller, the fan-out, fauxqs, the delivery worker), and how many
 * deliveries per second the whole chain sustains. Events are recorded with the events outbox
 * directly, so each one's id is known at its commit (an API call would also time the HTTP answer).
 *
 * Imported by `run.ts` after the local stack set the environment the shared code reads at import.
 */
import { createServer } from "node:http";
import { close, listen } from "../lib/local/http-server.ts";
import type { EnvironmentCredentials } from "../shared/projects/project.ts";
import { percentile } from "./stats.ts";

/** Writers recording the burst's events (more would only queue on the SDK's sockets). */
const BURST_WRITERS = 16;

export interface WebhookFigures {
  /** Commit of an event → its webhook received: milliseconds. */
  p50: number;
  p99: number;
  events: number;
  concurrency: number;
  /** Deliveries per second over a burst of `burst` events. */
  deliveriesPerSecond: number;
  burst: number;
}

export async function benchWebhooks(options: {
  apiUrl: string;
  credentials: EnvironmentCredentials;
  events: number;
  concurrency: number;
  burst: number;
}): Promise<WebhookFigures> {
  const { eventWrite } = await import("../shared/events/event.ts");
  const { transactWrite } = await import("../shared/db/transactions.ts");
  const scope = options.credentials.project_id;

  const arrivals = new Map<string, (at: number) => void>();
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const at = performance.now();
      const { event_id: id } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { event_id: string };
      arrivals.get(id)?.(at);
      arrivals.delete(id);
      response.writeHead(200).end("ok");
    });
  });
  const port = await listen(receiver, 0);
  try {
    const authorization = `Basic ${Buffer.from(`${scope}:${options.credentials.private_key}`).toString("base64")}`;
    const set = await fetch(`${options.apiUrl}/projects/${scope}`, {
      method: "PUT",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ webhook_url: `http://127.0.0.1:${port}/hooks` }),
    });
    if (!set.ok) throw new Error(`PUT /projects: ${set.status} ${await set.text()}`);

    /** Records one event; resolves once committed, with the commit time and its webhook's arrival to come. */
    const record = async (): Promise<{ committed: number; arrived: Promise<number> }> => {
      const writes = eventWrite(
        scope,
        "customer.created",
        { customer: { id: "cust_bench", first_name: "Ada" } },
        new Date(),
      );
      const id = String(writes[0]?.Put?.Item?.id);
      const arrived = new Promise<number>((resolve) => arrivals.set(id, resolve));
      await transactWrite(writes);
      return { committed: performance.now(), arrived };
    };
    const fire = async () => {
      const { committed, arrived } = await record();
      return { committed, arrived: await arrived };
    };

    // Warm-up: handlers loaded, connections open.
    await Promise.all(Array.from({ length: 20 }, fire));

    const samples: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next++ < options.events) {
          const { committed, arrived } = await fire();
          samples.push(arrived - committed);
        }
      }),
    );
    samples.sort((a, b) => a - b);

    // The burst: events written as fast as BURST_WRITERS writers go, without waiting for deliveries.
    const started = performance.now();
    const delivered: Promise<number>[] = [];
    let written = 0;
    await Promise.all(
      Array.from({ length: BURST_WRITERS }, async () => {
        while (written++ < options.burst) delivered.push((await record()).arrived);
      }),
    );
    const finished = Math.max(...(await Promise.all(delivered)));
    return {
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      events: options.events,
      concurrency: options.concurrency,
      deliveriesPerSecond: options.burst / ((finished - started) / 1000),
      burst: options.burst,
    };
  } finally {
    await close(receiver);
  }
}
