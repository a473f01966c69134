import type { PageRequest, RecordedAct, RunRepository, RunSummary } from '../ports.js';

/** One page of a history list: newest first, with the cursor of the next page. */
export interface HistoryPage<Item> {
  items: Item[];
  cursor?: string;
}

export const HISTORY_PAGE_SIZE_DEFAULT = 20;
export const HISTORY_PAGE_SIZE_MAX = 100;

/**
 * "Decided by me": what the signed-in user decided (approve, reject, cancel) or approved in a
 * k-of-n turn, newest first. Their own acts only, so it needs no grant: each links to the run,
 * which they may still open only while they may read it (GET /runs/{id}). One query of the
 * history index and one read of the runs' labels per page.
 */
export async function listMyDecisions(
  dependencies: { runs: Pick<RunRepository, 'listActsOf'> },
  viewer: { userId: string },
  page: PageRequest,
): Promise<HistoryPage<RecordedAct>> {
  const listed = await dependencies.runs.listActsOf(viewer.userId, page);
  // The deciding approval of a k-of-n turn is also its decision: shown once, as the decision.
  const decided = new Set(
    listed.items.filter((act) => act.kind === 'decision').map((act) => `${act.runId}#${act.turn}`),
  );
  const items = listed.items.filter(
    (act) => act.kind === 'decision' || !decided.has(`${act.runId}#${act.turn}`),
  );
  return { items, ...(listed.cursor ? { cursor: listed.cursor } : {}) };
}

/** "My runs": the runs the signed-in user started, newest first. One query of the history index. */
export async function listMyRuns(
  dependencies: { runs: Pick<RunRepository, 'listRunsOwnedBy'> },
  viewer: { userId: string },
  page: PageRequest,
): Promise<HistoryPage<RunSummary>> {
  return dependencies.runs.listRunsOwnedBy(viewer.userId, page);
}
