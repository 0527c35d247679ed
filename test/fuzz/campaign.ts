/**
 * A fuzzing campaign: generated requests (`requests.ts`) sent over real HTTP to a running API, each
 * answer checked: below 500, never empty, JSON in the success or error shape (HTML only from the
 * routes that answer pages), and an answer at all. Requests are generated in batches of a fixed
 * size, batch `b` from seed `seed + b`: request `n` of a campaign is the same on every run with its
 * seed, whatever the number of requests (its fixtures are made anew each time, their roles are the
 * same), and a finding names the seed and number that reproduce it.
 */
import { Agent } from "node:http";
import fc from "fast-check";
import { routes } from "../../lib/topology.ts";
import type { ProjectCredentials } from "../../shared/projects/project.ts";
import { basicAuthorization, type RawResponse, sendRaw } from "../support/raw-http.ts";
import type { Fixtures } from "./fixtures.ts";
import { anyRequest, type FuzzRequest, renderBody } from "./requests.ts";

/** Fixed, so `npm test` sends the same requests every time; `FUZZ_SEED` picks another campaign. */
export const DEFAULT_SEED = 9009;
const BATCH_SIZE = 50;
/**
 * Requests delete, pay and refund the fixtures they address: fresh ones every so many requests keep
 * later requests reaching existing resources in every state.
 */
const FIXTURES_LAST_FOR = 1000;
const ANSWER_TIMEOUT_MS = 35_000;

export interface CampaignOptions {
  url: string;
  project: ProjectCredentials;
  /** Makes the resources requests address; called again every `FIXTURES_LAST_FOR` requests. */
  fixtures: () => Promise<Fixtures>;
  seed: number;
  requests: number;
  /** Requests in flight at once. */
  concurrency: number;
}

export interface Finding {
  /** Its number in the campaign (from 0): with the seed, what regenerates it. */
  number: number;
  problem: string;
  request: FuzzRequest;
  answer?: RawResponse;
}

export interface CampaignReport {
  seed: number;
  sent: number;
  /** Requests not sent because they match a known domain fault, by fault id. */
  statuses: Record<string, number>;
  findings: Finding[];
  durationMs: number;
}

/**
 * Where HTML pages and scripts may come from: the routes without credentials (the 3DS and checkout
 * pages, the browser scripts), whatever route a request was generated for (an unrouted path may
 * match one). Every other answer is JSON.
 */
const PAGE_ROUTES = routes
  .filter((route) => route.unauthenticated)
  .map((route) => ({
    method: route.method,
    path: new RegExp(
      `^${route.path
        .split(/\{[^}]+\}/)
        .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]+")}$`,
    ),
  }));

function servedByPageRoute(request: FuzzRequest): boolean {
  const path = request.target.split("?")[0] ?? "";
  return PAGE_ROUTES.some((route) => route.method === request.method && route.path.test(path));
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignReport> {
  const started = performance.now();
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const report: CampaignReport = {
    seed: options.seed,
    sent: 0,
    statuses: {},
    findings: [],
    durationMs: 0,
  };
  let arbitrary = anyRequest(await options.fixtures());
  try {
    for (let first = 0; first < options.requests; first += BATCH_SIZE) {
      if (first > 0 && first % FIXTURES_LAST_FOR === 0) arbitrary = anyRequest(await options.fixtures());
      const batch = fc.sample(arbitrary, { seed: options.seed + first / BATCH_SIZE, numRuns: BATCH_SIZE });
      const numbered = batch
        .slice(0, options.requests - first)
        .map((request, index) => ({ request, number: first + index }));
      await inParallel(numbered, options.concurrency, async ({ request, number }) => {
        const outcome = await send(options, request, agent);
        report.sent += 1;
        const status = "status" in outcome ? String(outcome.status) : "no answer";
        report.statuses[status] = (report.statuses[status] ?? 0) + 1;
        const problem = "error" in outcome ? `no answer: ${outcome.error}` : answerProblem(request, outcome);
        if (problem) {
          report.findings.push({
            number,
            problem,
            request,
            ...("status" in outcome ? { answer: outcome } : {}),
          });
        }
      });
    }
  } finally {
    agent.destroy();
  }
  report.durationMs = performance.now() - started;
  return report;
}

async function send(
  options: CampaignOptions,
  request: FuzzRequest,
  agent: Agent,
): Promise<RawResponse | { error: string }> {
  const headers: Record<string, string> = { ...request.headers };
  const authorization = authorizationOf(request, options.project);
  if (authorization !== undefined) headers.authorization = authorization;
  const body = request.body ? renderBody(request.body) : undefined;
  if (body?.contentType) headers["content-type"] = body.contentType;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ error: string }>((done) => {
    timer = setTimeout(() => done({ error: `none within ${ANSWER_TIMEOUT_MS} ms` }), ANSWER_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      sendRaw(
        options.url,
        { method: request.method, target: request.target, headers, ...(body ? { body: body.bytes } : {}) },
        agent,
      ),
      timeout,
    ]);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

function authorizationOf(request: FuzzRequest, project: ProjectCredentials): string | undefined {
  const who = request.credential;
  switch (who.kind) {
    case "none":
      return undefined;
    case "bad":
      return who.authorization;
    case "private":
      return basicAuthorization(project[who.environment].project_id, project[who.environment].private_key);
    case "public":
      return basicAuthorization(project[who.environment].project_id, "");
    case "wrong-key":
      return basicAuthorization(
        project[who.environment].project_id,
        `${project[who.environment].private_key}x`,
      );
  }
}

/** What is wrong with an answer, or undefined when it is one a client library can read. */
export function answerProblem(request: FuzzRequest, answer: RawResponse): string | undefined {
  if (answer.status >= 500) return `status ${answer.status}`;
  if (answer.text === "") return `status ${answer.status} with an empty body`;
  const contentType = String(answer.headers["content-type"] ?? "");
  if (contentType.startsWith("text/html") || contentType.startsWith("text/javascript")) {
    return servedByPageRoute(request) ? undefined : `a ${contentType} answer from a JSON route`;
  }
  if (!contentType.startsWith("application/json")) return `content type "${contentType}"`;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return "a body that is not JSON";
  }
  return answer.status < 400 ? successProblem(body) : errorProblem(body);
}

function successProblem(body: unknown): string | undefined {
  return isObject(body) && body.success === true ? undefined : "a success without success: true";
}

function errorProblem(body: unknown): string | undefined {
  if (!isObject(body) || body.success !== false) return "an error without success: false";
  if (typeof body.error_type !== "string" || body.error_type === "") return "an error without error_type";
  if (typeof body.message !== "string") return "an error without message";
  const fields = body.invalid_fields;
  const wellFormed = (field: unknown) =>
    isObject(field) && typeof field.name === "string" && typeof field.message === "string";
  if (fields !== undefined && !(Array.isArray(fields) && fields.every(wellFormed))) {
    return "invalid_fields not a list of {name, message}";
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function inParallel<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

// ---- reporting --------------------------------------------------------------------------------

export function formatReport(report: CampaignReport): string {
  const seconds = report.durationMs / 1000;
  const statuses = Object.entries(report.statuses)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, count]) => `${status}: ${count}`)
    .join(", ");
  return [
    `fuzz: seed ${report.seed} (FUZZ_SEED), ${report.sent} requests in ${seconds.toFixed(1)} s (${Math.round(report.sent / seconds)}/s)`,
    `fuzz: statuses ${statuses}`,
    `fuzz: ${report.findings.length} findings`,
    ...report.findings.map((finding) => describeFinding(report.seed, finding)),
  ].join("\n");
}

const shorten = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;

/** A finding with the exact request: what to send to see it again, and the seed and number that make it. */
export function describeFinding(seed: number, finding: Finding): string {
  const { request, answer } = finding;
  const body = request.body ? renderBody(request.body) : undefined;
  return JSON.stringify(
    {
      problem: finding.problem,
      reproduce: `FUZZ_SEED=${seed}, request #${finding.number}`,
      route: request.route,
      method: request.method,
      target: shorten(request.target, 400),
      credential: request.credential,
      headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, shorten(v, 80)])),
      ...(body
        ? {
            contentType: body.contentType,
            body: shorten(body.bytes.toString("utf8"), 1500),
            recipe: request.body?.kind,
          }
        : {}),
      fixtures: request.labels,
      ...(answer ? { answer: { status: answer.status, body: shorten(answer.text, 300) } } : {}),
    },
    null,
    2,
  );
}
