import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import type { ApprovalRecord, DecisionRecord } from '../../core/approvals/decision-record.js';
import type { PageRequest, RecordedAct, RunSummary } from '../../core/ports.js';
import { type RunRecord, runSummarySchema } from '../../core/run-record.js';
import {
  actHistoryKey,
  decodeHistoryCursor,
  encodeHistoryCursor,
  runHistoryKey,
} from '../dynamo/history-index.js';
import { assertPageLimit } from '../dynamo/item-codec.js';

/**
 * The history lists of the in-memory repository, read as the DynamoDB adapter reads the
 * history index: the same keys, order and cursor, so the contract tests hold for both.
 */

/** One page of what `userId` decided and approved, newest first, with each run's label and status. */
export function pageActsOf(
  records: { decisions: Iterable<DecisionRecord>; approvals: Iterable<ApprovalRecord> },
  runOf: (runId: string) => RunRecord | undefined,
  userId: string,
  page: PageRequest,
): { items: RecordedAct[]; cursor?: string } {
  const decided = [...records.decisions]
    .filter((decision) => decision.decidedBy === userId)
    .map(
      (decision): RecordedAct => ({
        kind: 'decision',
        runId: decision.runId,
        turn: decision.turn,
        at: decision.decidedAt,
        digest: decision.digest,
        decision: decision.decision,
      }),
    );
  const approved = [...records.approvals]
    .filter((approval) => approval.approvedBy === userId)
    .map(
      (approval): RecordedAct => ({
        kind: 'approval',
        runId: approval.runId,
        turn: approval.turn,
        at: approval.approvedAt,
        digest: approval.digest,
      }),
    );
  const acts = [...decided, ...approved].map((act) => ({
    sortKey: historySortKey(actHistoryKey({ ...act, actor: userId })),
    act,
  }));
  const { items, cursor } = pageNewestFirst(acts, page);
  return {
    items: items.map(({ act }) => {
      const record = runOf(act.runId);
      return record ? { ...act, run: { label: record.label, status: record.status } } : act;
    }),
    ...(cursor ? { cursor } : {}),
  };
}

/** One page of the runs `owner` started, newest first, as summaries. */
export function pageRunsOwnedBy(
  records: Iterable<RunRecord>,
  owner: string,
  page: PageRequest,
): { items: RunSummary[]; cursor?: string } {
  const owned = [...records]
    .filter((record) => record.owner === owner)
    .map((record) => ({ sortKey: historySortKey(runHistoryKey(record)), record }));
  const { items, cursor } = pageNewestFirst(owned, page);
  return {
    items: items.map(({ record }) => runSummarySchema.parse(record)),
    ...(cursor ? { cursor } : {}),
  };
}

function historySortKey(key: Record<string, string>): string {
  return key[TABLE_LAYOUT.historyIndex.sortKey] ?? '';
}

/** One page of the history index, as DynamoDB's Query below the cursor reads it. */
function pageNewestFirst<Entry extends { sortKey: string }>(
  entries: Entry[],
  page: PageRequest,
): { items: Entry[]; cursor?: string } {
  assertPageLimit(page.limit);
  const before = page.cursor === undefined ? undefined : decodeHistoryCursor(page.cursor);
  const sorted = entries
    .filter((entry) => before === undefined || entry.sortKey < before)
    .sort((left, right) => (left.sortKey < right.sortKey ? 1 : left.sortKey > right.sortKey ? -1 : 0));
  const items = sorted.slice(0, page.limit);
  const last = items.at(-1);
  return {
    items,
    ...(sorted.length > page.limit && last !== undefined
      ? { cursor: encodeHistoryCursor(last.sortKey) }
      : {}),
  };
}
