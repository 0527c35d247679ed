import { clock } from "../../shared/clock.ts";
import type { ScheduledJob } from "../../shared/scheduling/port.ts";
import { completeJob, dueJobs, failJob } from "../../shared/scheduling/table.ts";
import {
  type RecurringJobDeclaration,
  recurringJobs,
  type ScheduledJobDeclaration,
  scheduledJobs,
} from "../topology.ts";
import { handlerLoader, invoke, lambdaContext } from "./lambda.ts";
import { repoRoot } from "./paths.ts";

/**
 * The local stack's EventBridge Scheduler: every `intervalMs` it fires the jobs of the table
 * scheduler (`shared/scheduling/table.ts`) that are due by `clock.now()`, each by invoking the
 * function `lib/topology.ts` declares for its kind with the job as the event, as EventBridge
 * Scheduler invokes it in AWS. A job that ran is deleted; one that failed is retried later. Jobs live
 * in the table, so a job that fell due while the stack was down fires at the first tick after start.
 * Once started, it also runs each recurring job of the topology every `rateMinutes` (and at start),
 * with the event EventBridge Scheduler gives it.
 *
 * Imports `shared/config.ts` (through the table scheduler): import this module only once the
 * environment is set (see `start.ts`).
 */
export interface LocalSchedulerOptions {
  /** Pause between two ticks. Default 1000 ms. */
  intervalMs?: number;
  /** Where `functions/` lives. Default: the repository root. */
  rootDir?: string;
  /**
   * How a job is run. Default: its declared handler, as Lambda would run it, with the job and when it
   * was first due (`scheduledTime`) as the event, as EventBridge Scheduler gives it.
   */
  run?: (job: ScheduledJob, scheduledTime: string) => Promise<unknown>;
  errorLog?: (message: string, error?: unknown) => void;
  /** Default: the recurring jobs of `lib/topology.ts`. */
  recurringJobs?: Readonly<Record<string, RecurringJobDeclaration>>;
}

export interface LocalScheduler {
  /** Fires every job due now, one after the other; resolves with how many ran successfully. */
  tick(): Promise<number>;
  /** Ticks every `intervalMs`, and runs the recurring jobs at their rates, until `stop()`. */
  start(): void;
  /** No new tick; waits for the running one. */
  stop(): Promise<void>;
}

function declarationOf(job: ScheduledJob): ScheduledJobDeclaration {
  const declaration = Object.values(scheduledJobs).find((candidate) => candidate.kind === job.kind);
  if (!declaration) throw new Error(`No function is declared for scheduled jobs of kind ${job.kind}`);
  return declaration;
}

export function createLocalScheduler(options: LocalSchedulerOptions = {}): LocalScheduler {
  const intervalMs = options.intervalMs ?? 1000;
  const errorLog = options.errorLog ?? ((message, error) => console.error(message, error ?? ""));
  const load = handlerLoader(options.rootDir ?? repoRoot);
  const run =
    options.run ??
    (async (job: ScheduledJob, scheduledTime: string) => {
      const { handler, timeoutSeconds } = declarationOf(job);
      const timeoutMs = timeoutSeconds * 1000;
      const event = { ...job, scheduledTime };
      return invoke(await load(handler), event, lambdaContext(handler, timeoutMs), timeoutMs);
    });

  let running: Promise<number> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const recurringTimers: NodeJS.Timeout[] = [];
  const recurringRuns = new Set<Promise<unknown>>();

  /** One run of a recurring job, as EventBridge Scheduler starts it (a run never overlaps itself). */
  function recurring(name: string, declaration: RecurringJobDeclaration) {
    let current: Promise<unknown> | undefined;
    return () => {
      if (current || stopped) return;
      const timeoutMs = declaration.timeoutSeconds * 1000;
      const event = { recurringJob: name, scheduledTime: new Date().toISOString() };
      current = load(declaration.handler)
        .then((handle) => invoke(handle, event, lambdaContext(declaration.handler, timeoutMs), timeoutMs))
        .catch((error: unknown) =>
          errorLog(`Recurring job ${name} failed; it runs again at its next time`, error),
        )
        .finally(() => {
          if (current) recurringRuns.delete(current);
          current = undefined;
        });
      recurringRuns.add(current);
    };
  }

  async function fireDue(): Promise<number> {
    let ran = 0;
    for (const stored of await dueJobs(clock.now())) {
      try {
        await run(stored.job, stored.firstFireAt);
        await completeJob(stored);
        ran += 1;
      } catch (error) {
        const next = await failJob(stored, clock.now());
        errorLog(
          next === "dead"
            ? `Scheduled job ${stored.name} failed its last attempt: moved to the dead jobs`
            : `Scheduled job ${stored.name} failed (attempt ${stored.attempts + 1}); it will run again`,
          error,
        );
      }
    }
    return ran;
  }

  function tick(): Promise<number> {
    // One tick at a time: a job is never fired twice at once by the same scheduler.
    running ??= fireDue().finally(() => {
      running = undefined;
    });
    return running;
  }

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      tick()
        .catch((error: unknown) => errorLog("The local scheduler could not read its jobs", error))
        .finally(schedule);
    }, intervalMs);
  }

  return {
    tick,
    start() {
      stopped = false;
      // At once: jobs that fell due while the stack was down fire now.
      void tick()
        .catch((error: unknown) => errorLog("The local scheduler could not read its jobs", error))
        .finally(schedule);
      for (const [name, declaration] of Object.entries(options.recurringJobs ?? recurringJobs)) {
        const runOnce = recurring(name, declaration);
        runOnce();
        // `RECURRING_JOB_INTERVAL_MS`: a test of the local stack runs them more often.
        const interval = Number(process.env.RECURRING_JOB_INTERVAL_MS) || declaration.rateMinutes * 60_000;
        recurringTimers.push(setInterval(runOnce, interval));
      }
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      for (const recurringTimer of recurringTimers.splice(0)) clearInterval(recurringTimer);
      await running?.catch(() => undefined);
      await Promise.all(recurringRuns);
    },
  };
}
