import type { RunDependencies } from '../run-dependencies.js';

/** Pages of the inbox index read per report; beyond this many waiting runs the age is a floor. */
const MAXIMUM_PAGES = 50;
const PAGE_SIZE = 100;

export interface WaitingRunsReport {
  /** Runs waiting for a decision (counted up to the page bound). */
  waiting: number;
  /** How long the longest-waiting run has waited, in milliseconds (0 when none waits). */
  oldestWaitMilliseconds: number;
}

/**
 * Measures the approval backlog for the "runs waiting too long" alarm: nothing runs while a
 * run waits, so a scheduled probe reads the inbox index (one query per 100 cards, sealed cards
 * never opened) and emits `RunsWaiting` and `OldestWaitingRunAge`.
 *
 * @example
 * await reportWaitingRuns(dependencies); // { waiting: 3, oldestWaitMilliseconds: 5400000 }
 */
export async function reportWaitingRuns(
  dependencies: Pick<RunDependencies, 'runs' | 'clock' | 'logger' | 'metrics'>,
): Promise<WaitingRunsReport> {
  const now = dependencies.clock.now().getTime();
  let waiting = 0;
  let oldestPausedAt = now;
  let cursor: string | undefined;
  for (let page = 0; page < MAXIMUM_PAGES; page += 1) {
    const result = await dependencies.runs.listWaitingCards({
      limit: PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    });
    for (const card of result.cards) {
      waiting += 1;
      oldestPausedAt = Math.min(oldestPausedAt, Date.parse(card.pausedAt));
    }
    cursor = result.cursor;
    if (!cursor) break;
  }
  const report = { waiting, oldestWaitMilliseconds: Math.max(0, now - oldestPausedAt) };
  dependencies.metrics.count('RunsWaiting', report.waiting);
  dependencies.metrics.observe('OldestWaitingRunAge', report.oldestWaitMilliseconds, 'Milliseconds');
  dependencies.logger.info('waiting runs reported', { ...report });
  return report;
}
