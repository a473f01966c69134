import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { CountersignError } from '../../core/errors.js';
import { APPROVER_ENTRY_SORT_KEY } from './inbox-index.js';
import type { ItemKey } from './item-codec.js';

/**
 * The keys of a run's items (item layout in `run-repository.ts`): every item of a run lives in
 * the partition `RUN#<runId>`, one sort key per kind.
 */
const RUN_PARTITION_PREFIX = 'RUN#';
const RUN_SORT_KEY = 'RUN';
export const CARD_SORT_KEY = 'CARD';
/** Turns are written with six digits so decisions sort in turn order. */
const MAX_TURN = 999_999;

const runPartition = (runId: string): string => `${RUN_PARTITION_PREFIX}${runId}`;
const keyOf = (runId: string, sortKey: string): ItemKey => ({
  [TABLE_LAYOUT.partitionKey]: runPartition(runId),
  [TABLE_LAYOUT.sortKey]: sortKey,
});
const paddedTurn = (turn: number): string => String(turn).padStart(6, '0');

/** The key of a run's item. */
export const runItemKey = (runId: string): ItemKey => keyOf(runId, RUN_SORT_KEY);
export const cardItemKey = (runId: string): ItemKey => keyOf(runId, CARD_SORT_KEY);
/** A card's entry in the approvers' inbox index (inbox-index.ts). */
export const approverEntryItemKey = (runId: string): ItemKey => keyOf(runId, APPROVER_ENTRY_SORT_KEY);
export const decisionItemKey = (runId: string, turn: number): ItemKey =>
  keyOf(runId, `DECISION#${paddedTurn(turn)}`);
export const approvalItemKey = (runId: string, turn: number, userId: string): ItemKey =>
  keyOf(runId, `APPROVAL#${paddedTurn(turn)}#${userId}`);
/** The Slack messages of a run (one per turn and channel) sort under this prefix. */
export const SLACK_MESSAGE_SORT_PREFIX = 'SLACK#';
export const slackMessageItemKey = (runId: string, turn: number, channelId: string): ItemKey =>
  keyOf(runId, `${SLACK_MESSAGE_SORT_PREFIX}${paddedTurn(turn)}#${channelId}`);
/** The mail of a card turn to one approver (the email channel's once-only claim). */
export const cardMailItemKey = (runId: string, turn: number, userId: string): ItemKey =>
  keyOf(runId, `MAIL#${paddedTurn(turn)}#${userId}`);
/** Receipt chain entries (receipt-chain-store.ts), in sequence order. */
export const CHAIN_ENTRY_SORT_PREFIX = 'CHAIN#';
export const chainEntryItemKey = (runId: string, sequence: number): ItemKey => {
  if (!Number.isInteger(sequence) || sequence < 0 || sequence > 99_999_999) {
    throw new CountersignError('internal', 'A chain entry names a sequence out of range.', { expose: false });
  }
  return keyOf(runId, `${CHAIN_ENTRY_SORT_PREFIX}${String(sequence).padStart(8, '0')}`);
};
/** The call ledger: `CALL#<turn>#<call index, 3 digits>` (a turn holds at most 50 calls). */
export const callItemKey = (runId: string, turn: number, index: number): ItemKey =>
  keyOf(runId, `${callSortPrefix(turn)}${String(index).padStart(3, '0')}`);
/** The sort key prefix of one turn's ledger, for a query of all its calls. */
export const callSortPrefix = (turn: number): string => `CALL#${paddedTurn(turn)}#`;
/** The partition key of a run's items, for a query of one kind of them. */
export const runPartitionKey = runPartition;

/** The run id of a `RUN#<runId>` partition key; anything else is not a run item. */
export function runIdOfPartition(partitionKey: unknown): string {
  if (
    typeof partitionKey !== 'string' ||
    !partitionKey.startsWith(RUN_PARTITION_PREFIX) ||
    partitionKey.length <= RUN_PARTITION_PREFIX.length
  ) {
    throw new CountersignError('internal', 'A stored card has an unexpected key.', { expose: false });
  }
  return partitionKey.slice(RUN_PARTITION_PREFIX.length);
}

/**
 * An item with its run id taken from the key it was read under, never from its own `runId`
 * attribute: the run id is the encryption context of the item's sealed blobs, so an item
 * copied under another run's key is opened as that run's and refused by the sealer.
 */
export function runFromKey<Item extends { runId: string }>(runId: string, item: Item): Item {
  return { ...item, runId };
}

/** A turn outside the six digits of a decision's sort key is a bug upstream, never stored. */
export function assertTurn(turn: number): void {
  if (!Number.isInteger(turn) || turn < 0 || turn > MAX_TURN) {
    throw new CountersignError('internal', 'A decision names a turn out of range.', { expose: false });
  }
}
