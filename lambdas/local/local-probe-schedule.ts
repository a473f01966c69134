import { WAITING_RUNS_PROBE_INTERVAL_MINUTES } from '../contract/table-layout.js';
import { nameErrorClass } from '../core/errors.js';
import type { RunDependencies } from '../core/run-dependencies.js';
import { redeliverDecisions } from '../core/runs/redeliver-decisions.js';
import { reportWaitingRuns } from '../core/runs/report-waiting-runs.js';

/** The waiting-runs probe's schedule in `npm start`, as the deployed EventBridge rule runs it. */
export interface LocalProbeSchedule {
  /** Runs the probe now (tests, and each tick): redelivery first, then the backlog report. */
  runOnce(): Promise<void>;
  /** Stops the schedule, once a probe under way has finished (it may be writing to dynalite). */
  stop(): Promise<void>;
}

/**
 * Runs the waiting-runs probe every `intervalMs` (the deployed interval by default): it
 * redelivers claimed decisions their request left undelivered and reports the backlog. A tick
 * that finds the last one still running is skipped, and a failure is logged, as the deployed
 * schedule's dead-letter queue would keep it, never the process's end.
 *
 * @example
 * const probe = scheduleLocalProbe(dependencies); // ... probe.stop() on shutdown
 */
export function scheduleLocalProbe(
  dependencies: RunDependencies,
  intervalMs = WAITING_RUNS_PROBE_INTERVAL_MINUTES * 60_000,
): LocalProbeSchedule {
  let running: Promise<void> | undefined;
  const runOnce = (): Promise<void> => {
    running ??= (async () => {
      try {
        await redeliverDecisions(dependencies);
        await reportWaitingRuns(dependencies);
      } catch (error) {
        dependencies.logger.error('waiting-runs probe failed', { errorClass: nameErrorClass(error) });
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void runOnce(), intervalMs);
  // The schedule alone never keeps the process alive.
  timer.unref();
  return {
    runOnce,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
