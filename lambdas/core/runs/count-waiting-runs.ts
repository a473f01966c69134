import type { RunDependencies } from '../run-dependencies.js';

/** Waiting cards are read this many at a time (one inbox query each). */
const CARDS_PER_QUERY = 100;

/**
 * How many runs wait for a decision under a configuration or a task: deleting either would
 * leave those runs unable to go on. The inbox index holds exactly the waiting cards; a card
 * names its configuration, and its run record names the task. An admin operation: it reads
 * every waiting card, which the inbox bounds in pages.
 */
export async function countWaitingRuns(
  dependencies: Pick<RunDependencies, 'runs'>,
  target: { configurationId: string } | { taskId: string; configurationId: string },
): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await dependencies.runs.listWaitingCards({
      limit: CARDS_PER_QUERY,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const card of page.cards) {
      if (card.configurationId !== target.configurationId) continue;
      if ('taskId' in target) {
        const record = await dependencies.runs.getRunRecord(card.runId);
        if (record?.taskId !== target.taskId) continue;
      }
      count += 1;
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return count;
}
