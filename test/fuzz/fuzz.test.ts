import { describe, expect, it } from "vitest";
import { useInProcessApi } from "../e2e/harness.ts";
import { DEFAULT_SEED, describeFinding, formatReport, runCampaign } from "./campaign.ts";
import { createFixtures } from "./fixtures.ts";

/**
 * The fuzz suite: generated requests across every route of `lib/topology.ts`, over real HTTP
 * against the in-process API and DynamoDB Local. `npm test` sends a slice of a few hundred;
 * `npm run fuzz` sends 10,000 (`FUZZ_REQUESTS`), and `FUZZ_SEED` picks another campaign.
 */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 500);
const SEED = Number(process.env.FUZZ_SEED ?? DEFAULT_SEED);
const CONCURRENCY = 4;

const local = useInProcessApi("Fuzz");

describe("fuzzing every route", () => {
  it(`answers ${REQUESTS} generated requests (seed ${SEED}) below 500, in the success or error shape, and keeps answering`, {
    timeout: 60_000 + REQUESTS * 100,
  }, async () => {
    const report = await runCampaign({
      url: local.url,
      project: local.project,
      fixtures: () => createFixtures(local.url, local.project),
      seed: SEED,
      requests: REQUESTS,
      concurrency: CONCURRENCY,
    });
    console.log(formatReport(report));

    expect(report.findings.map((finding) => describeFinding(SEED, finding))).toEqual([]);
    expect(report.sent).toBe(REQUESTS);
    const after = await local.sandbox.get("/customers?limit=1");
    expect(after.status).toBe(200);
    expect(after.body.success).toBe(true);
  });
});
