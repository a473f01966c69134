import * as z from 'zod/mini';
import type { UserProfile } from '../identity.js';
import type { RunRecord } from '../run-record.js';
import {
  buildExternalRunView,
  type ExternalAnswerDependencies,
  type ExternalRunView,
  readOwnExternalRun,
} from './external-answer.js';

/**
 * The longest a caller may wait for an answer in one request: under API Gateway's 30-second
 * integration limit, with room for the reads and the answer (the function's timeout is 29 s).
 */
export const MAX_EXTERNAL_WAIT_SECONDS = 25;

/**
 * How long to sleep between reads of a waiting run: soon at first (a decision often lands
 * within seconds of a look), then every two seconds. At most 16 reads in 25 seconds.
 */
const POLL_INTERVALS_MS = [250, 500, 1_000, 2_000] as const;

/** `?wait=<seconds>`: how long GET /external-runs/{id} may hold the request for an answer. */
export const externalRunQuerySchema = z.strictObject({
  wait: z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(MAX_EXTERNAL_WAIT_SECONDS)), 0),
});

export type AwaitExternalAnswerDependencies = ExternalAnswerDependencies & {
  /** @default - a timer */
  sleep?: (milliseconds: number) => Promise<void>;
};

/**
 * The caller's long poll (docs/external-agents.md): its run as it stands, or, while it waits for a
 * decision, as it stands once decided or after `waitSeconds`, whichever comes first. Each read is
 * of the run record alone; the answer's own reads come once, at the end. The waiting is counted
 * in the sleeps it takes, so a request never holds longer than asked, whatever the clock says.
 *
 * @example
 * const view = await awaitExternalAnswer(dependencies, machine, runId, 25); // { status: 'decided', calls: [...] }
 */
export async function awaitExternalAnswer(
  dependencies: AwaitExternalAnswerDependencies,
  principal: UserProfile,
  runId: string,
  waitSeconds: number,
): Promise<ExternalRunView> {
  const sleep = dependencies.sleep ?? sleepFor;
  const budgetMs = Math.min(waitSeconds, MAX_EXTERNAL_WAIT_SECONDS) * 1000;
  let record = await readOwnExternalRun(dependencies, principal, runId);
  let waitedMs = 0;
  for (let poll = 0; isPending(record) && waitedMs < budgetMs; poll += 1) {
    const interval = POLL_INTERVALS_MS[Math.min(poll, POLL_INTERVALS_MS.length - 1)] ?? 2_000;
    const pause = Math.min(interval, budgetMs - waitedMs);
    await sleep(pause);
    waitedMs += pause;
    record = await readOwnExternalRun(dependencies, principal, runId);
  }
  return buildExternalRunView(dependencies, record);
}

function isPending(record: RunRecord): boolean {
  return record.status === 'running' || record.status === 'waiting';
}

function sleepFor(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
