import * as z from 'zod/mini';
import type { CardShown, StoredCard } from '../../core/approvals/approval-card.js';
import { CountersignError } from '../../core/errors.js';
import { DECISION_GATES } from '../../core/policy/policy-floor.js';
import type { RunRepository } from '../../core/ports.js';
import { type RunRecord, runRecordSchema } from '../../core/runs/run-record.js';
import { withoutUndefined } from './item-codec.js';

/**
 * How a run's card, decision and approval items are parsed back (the run record itself goes
 * through the core's `runRecordSchema`). Extra attributes such as the keys are stripped.
 */
const binarySchema = z.instanceof(Uint8Array);

export const storedCardSchema = z.object({
  runId: z.string(),
  owner: z.string(),
  label: z.string(),
  configurationId: z.string(),
  turn: z.number().check(z.int(), z.nonnegative()),
  digest: z.string(),
  pausedAt: z.string(),
  expiresAt: z.string(),
  toolNames: z.array(z.string()),
  writeToolNames: z.array(z.string()),
  fourEyes: z.boolean(),
  requiredApprovals: z.optional(z.number().check(z.int(), z.gte(1))),
  decisionGate: z.optional(z.enum(DECISION_GATES)),
  // A string set in DynamoDB (ADD keeps one entry per approver); an array in the core.
  approvedBy: z.optional(
    z.pipe(
      z.union([z.array(z.string()), z.instanceof(Set)]),
      z.transform((value: string[] | Set<unknown>) => [...value].map(String).sort()),
    ),
  ),
  revealRejectionReason: z.boolean(),
  approverGroups: z.optional(z.array(z.string())),
  state: z.enum(['waiting', 'decided']),
  sealedCard: binarySchema,
  sealedToken: binarySchema,
});

/** Only the routes of a card, read from the card as it was when it closed. */
export const approverGroupsAttribute = z.optional(z.array(z.string()));

export const decisionRecordSchema = z.object({
  runId: z.string(),
  turn: z.number().check(z.int(), z.nonnegative()),
  decision: z.enum(['approve', 'reject', 'cancel']),
  digest: z.string(),
  decidedBy: z.string(),
  decidedAt: z.string(),
  reason: z.optional(z.string()),
  // The audit shape belongs to the core; the adapter checks only that it is a list of calls.
  approvedBy: z.optional(z.array(z.string())),
  cardShown: z.custom<CardShown>(
    (value) =>
      typeof value === 'object' && value !== null && Array.isArray((value as { calls?: unknown }).calls),
  ),
});

export const approvalRecordSchema = z.object({
  runId: z.string().check(z.minLength(1)),
  turn: z.number().check(z.int(), z.nonnegative()),
  digest: z.string().check(z.minLength(1)),
  approvedBy: z.string().check(z.minLength(1)),
  approvedAt: z.string(),
});

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

/** A card item whose plaintext part does not parse cannot be opened, like a tampered blob. */
export function parseStoredCard(item: Record<string, unknown>): StoredCard {
  const parsed = z.safeParse(storedCardSchema, item);
  if (!parsed.success) {
    throw new CountersignError('sealed-state-rejected', 'The stored card has an unexpected shape.');
  }
  return parsed.data;
}
