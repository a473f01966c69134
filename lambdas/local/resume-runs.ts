import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../contract/table-layout.js';
import type { RunDependencies } from '../core/run-dependencies.js';
import { markRunExpired } from '../core/runs/end-run.js';
import type { LocalDynamo } from './local-dynamo.js';
import type { LocalStateMachineRunner } from './local-state-machine-runner.js';

/**
 * Starts again the runs a stopped local process lost, waiting runs first, then those caught
 * mid-step. On AWS, Step Functions keeps every execution; only the local process can lose one.
 *
 * @example
 * await resumeInterruptedRuns(dynamo, dependencies, runner); // after seeding, before serving
 */
export async function resumeInterruptedRuns(
  dynamo: LocalDynamo,
  dependencies: RunDependencies,
  runner: LocalStateMachineRunner,
): Promise<void> {
  await resumeWaitingRuns(dependencies, runner);
  await resumeRunningRuns(dynamo, dependencies, runner);
}

/**
 * A run that was mid-step when the process stopped (status `running`, or `waiting` with its
 * decision recorded but not yet carried out) is started again too:
 * every step is idempotent, and Prepare sends it back to its model turn, which routes a reply
 * already recorded instead of asking the model twice. On AWS, Step Functions keeps the
 * execution; only the local process can lose it. dynalite is local and small: a scan is fine.
 */
async function resumeRunningRuns(
  dynamo: LocalDynamo,
  dependencies: RunDependencies,
  runner: LocalStateMachineRunner,
): Promise<void> {
  const now = dependencies.clock.now().getTime();
  const pages = paginateScan(
    { client: dynamo.documentClient },
    {
      TableName: dynamo.tableName,
      FilterExpression: '#sk = :run AND (#status = :running OR #status = :waiting)',
      ExpressionAttributeNames: { '#sk': TABLE_LAYOUT.sortKey, '#status': 'status' },
      ExpressionAttributeValues: { ':run': 'RUN', ':running': 'running', ':waiting': 'waiting' },
      ProjectionExpression: 'runId, #status',
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      if (typeof item.runId !== 'string') continue;
      if (item.status === 'waiting') {
        // Its card still undecided: already restarted into its wait. Closed: decided, not yet carried out.
        const card = await dependencies.runs.getCard(item.runId);
        if (card?.state === 'open') continue;
      }
      await runner.start({ runId: item.runId, executionName: `${item.runId}-restart-${now}` });
    }
  }
}

/**
 * A waiting run outlives the process that paused it: its execution is started again and its
 * Prepare step routes straight back into the approval wait, which keeps the card and its
 * previews and only seals the new task token; the wait still ends at the card's `expiresAt`,
 * not a whole timeout after the restart. A run whose wait already ran out expires.
 */
async function resumeWaitingRuns(
  dependencies: RunDependencies,
  runner: LocalStateMachineRunner,
): Promise<void> {
  let cursor: string | undefined;
  const now = dependencies.clock.now().getTime();
  do {
    const page = await dependencies.runs.listWaitingCards({ limit: 100, ...(cursor ? { cursor } : {}) });
    for (const card of page.cards) {
      if (Date.parse(card.expiresAt) <= now) {
        await markRunExpired(dependencies, { runId: card.runId });
        continue;
      }
      await runner.start({
        runId: card.runId,
        executionName: `${card.runId}-restart-${now}`,
        approvalDeadline: new Date(card.expiresAt),
      });
    }
    cursor = page.cursor;
  } while (cursor);
}
