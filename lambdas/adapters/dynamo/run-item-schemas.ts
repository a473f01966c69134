import * as z from 'zod/mini';
import {
  type ApprovalContent,
  type DelegatedApproval,
  readableStoredCardSchema,
  type StoredCard,
} from '../../core/approvals/stored-card.js';
import { CountersignError } from '../../core/errors.js';
import type { RunRepository } from '../../core/ports.js';
import { type RunRecord, runRecordSchema } from '../../core/run-record.js';
import { withoutUndefined } from './item-codec.js';

/**
 * What the adapters add to the core's schemas of a run's items: the run record, the card and the
 * decision and approval records are the core's (versions included), read as they are here.
 */

/** What `RunRepository.updateRun` and `listWaitingCards` take besides the run id and changes. */
export type RunChanges = Parameters<RunRepository['updateRun']>[1];
export type RunUpdateOptions = NonNullable<Parameters<RunRepository['updateRun']>[2]>;
export type WaitingCardsRequest = Parameters<RunRepository['listWaitingCards']>[0];

/** The fields an update may set: any of the record's but its key. */
const runChangesSchema = z.strictObject(z.partial(z.omit(runRecordSchema, { runId: true })).shape);

/**
 * The changes and removals of a run update, checked: fields of the record only, never its key,
 * never one field both set and removed (a bad update is a bug upstream, never the client's).
 * Undefined when no status can satisfy `expectStatus` (an empty list): the write cannot happen.
 */
export function parseRunUpdate(
  changes: RunChanges,
  options: RunUpdateOptions,
): { changes: RunChanges; removeFields: ReadonlyArray<keyof RunRecord> } | undefined {
  const { runId: _ignored, ...definedChanges } = withoutUndefined(changes as Partial<RunRecord>);
  const parsed = runChangesSchema.safeParse(definedChanges);
  if (!parsed.success) {
    throw new CountersignError('internal', 'A run update has fields of an unexpected shape.', {
      expose: false,
    });
  }
  if (options.expectStatus && options.expectStatus.length === 0) return undefined;
  const removeFields = options.removeFields ?? [];
  for (const field of removeFields) {
    if (field === 'runId' || !(field in runRecordSchema.shape)) {
      throw new CountersignError('internal', 'A run update removes an unknown field.', { expose: false });
    }
    if (field in parsed.data) {
      throw new CountersignError('internal', 'A run update both sets and removes a field.', {
        expose: false,
      });
    }
  }
  return { changes: parsed.data, removeFields };
}

/**
 * A k-of-n approval's pair (an approver and whom they acted for, or what they approved) as a
 * string set member (a set, so ADD and DELETE need no read and keep one entry each): the JSON
 * array `[approver, value]`.
 */
function encodePair(approver: string, value: string): string {
  return JSON.stringify([approver, value]);
}

const pairMemberSchema = z.tuple([z.string(), z.string()]);

/** A member this code did not write reads as no pair at all, which fails the card's parse. */
function decodePair(member: unknown): [string, string] | undefined {
  try {
    const parsed = pairMemberSchema.safeParse(JSON.parse(String(member)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** One delegated k-of-n approval as a string set member. */
export function encodeDelegatedApproval(entry: DelegatedApproval): string {
  return encodePair(entry.approver, entry.actingFor);
}

/** One k-of-n approval of some calls only as a string set member. */
export function encodeApprovalContent(entry: ApprovalContent): string {
  return encodePair(entry.approver, entry.content);
}

/** A string set of pairs as the core's sorted list of `{approver, <field>}`; a foreign member fails the parse. */
function pairsOfSet<Field extends string>(members: Set<unknown>, field: Field): unknown[] {
  return [...members]
    .map(decodePair)
    .map((pair) => (pair === undefined ? undefined : { approver: pair[0], [field]: pair[1] }))
    .sort((left, right) => ((left?.approver ?? '') < (right?.approver ?? '') ? -1 : 1));
}

/**
 * A card item as the core's schema reads it: DynamoDB hands the k-of-n tally, its lapsed
 * approvers, its delegated approvals and its approvals of some calls back as string sets (ADD keeps one entry per member);
 * the core holds sorted lists.
 */
function storedCardOfItem(item: Record<string, unknown>): unknown {
  const card = { ...item };
  for (const attribute of ['approvedBy', 'lapsedApprovers']) {
    const members = card[attribute];
    if (members instanceof Set) card[attribute] = [...members].map(String).sort();
  }
  if (card.delegatedApprovals instanceof Set)
    card.delegatedApprovals = pairsOfSet(card.delegatedApprovals, 'actingFor');
  if (card.approvalContents instanceof Set)
    card.approvalContents = pairsOfSet(card.approvalContents, 'content');
  return card;
}

/** A card item of any version as the current one; `undefined` when it does not parse. */
export function readStoredCardItem(item: Record<string, unknown>): StoredCard | undefined {
  const parsed = readableStoredCardSchema.safeParse(storedCardOfItem(item));
  return parsed.success ? parsed.data : undefined;
}

/** A card item whose plaintext part does not parse cannot be opened, like a tampered blob. */
export function parseStoredCard(item: Record<string, unknown>): StoredCard {
  const card = readStoredCardItem(item);
  if (!card) throw new CountersignError('sealed-state-rejected', 'The stored card has an unexpected shape.');
  return card;
}
