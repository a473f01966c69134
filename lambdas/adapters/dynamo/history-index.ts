/**
 * The history index (issue #21): what each person did and started, newest first, in one GSI.
 * A decision or approval record is indexed under its actor (`ACTOR#<userId>`), a run record under
 * its owner (`OWNER#<userId>`); the sort key starts with when it happened, then names the item,
 * so every key is unique and one position is a cursor (the sort key of the last item shown). A
 * cursor never names a partition: used on another person's list it only positions within one's own.
 */
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { decodeCursor, encodeCursor, hasExactAttributes } from './item-codec.js';

const HISTORY = TABLE_LAYOUT.historyIndex;

const paddedTurn = (turn: number): string => String(turn).padStart(6, '0');

/** The index attributes of a decision record (`D`) or an approval record (`A`). */
export function actHistoryKey(act: {
  actor: string;
  at: string;
  runId: string;
  turn: number;
  kind: 'decision' | 'approval';
}): Record<string, string> {
  return {
    [HISTORY.partitionKey]: actorPartition(act.actor),
    [HISTORY.sortKey]: `${act.at}#${act.runId}#${paddedTurn(act.turn)}#${act.kind === 'decision' ? 'D' : 'A'}`,
  };
}

/** The index attributes of a run record. */
export function runHistoryKey(record: {
  owner: string;
  createdAt: string;
  runId: string;
}): Record<string, string> {
  return {
    [HISTORY.partitionKey]: ownerPartition(record.owner),
    [HISTORY.sortKey]: `${record.createdAt}#${record.runId}`,
  };
}

export const actorPartition = (userId: string): string => `ACTOR#${userId}`;
export const ownerPartition = (userId: string): string => `OWNER#${userId}`;

const SORT_KEY_PATTERN =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z#[A-Za-z0-9-]{1,100}(#\d{6}#[AD])?$/;

export function encodeHistoryCursor(sortKey: string): string {
  return encodeCursor({ before: sortKey }) ?? '';
}

/** The position a cursor stands for; anything this code did not write is a 400 naming `cursor`. */
export function decodeHistoryCursor(cursor: string): string {
  const key = decodeCursor(
    cursor,
    (candidate) => hasExactAttributes(candidate, ['before']) && SORT_KEY_PATTERN.test(candidate.before ?? ''),
  );
  return String(key.before);
}
