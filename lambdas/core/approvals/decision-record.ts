import * as z from 'zod/mini';
import { canonicalJson } from '../canonical-json.js';
import { refusal, refusingPrototypeKeys } from '../persisted-shape.js';
import type { ApprovalCard } from './approval-card.js';
import { callChoiceSchema } from './call-choices.js';
import type { CallPreview } from './pending-call.js';
import { delegatedApprovalSchema } from './stored-card.js';

/**
 * The append-only audit of a decision and, for k-of-n, of each approval. Version 6 records who a
 * delegate acted for (`actingFor`, `delegatedApprovals`), per-call decisions (`choices`) and edits
 * (`edits`); version 5 was never written (it was the refused future version while version 4 was
 * current); version 4 recorded the channel the decision came through (`channel`); version 3
 * named the request that wrote the claim (`claimId`) and was decided through the API; version 2
 * kept what the card showed as JSON text (`cardShown`); version 1 kept it as native attributes,
 * and records written before versions existed have no `schemaVersion` and read as version 1.
 * Every earlier version reads as version 6, decided in the approvers' own right for every call;
 * those before version 4 through the API, those before version 3 without a claim id. Fixtures:
 * `test/fixtures/decision-record/`.
 */
export const DECISION_RECORD_SCHEMA_VERSION = 6;
/**
 * The approval record (k-of-n) has its own version: version 3 names who a delegate approved for
 * (`actingFor`) and what an approval of some calls only did with each (`choices`, `content`);
 * version 2 recorded the channel; version 1 and unversioned records read as the API's. Earlier
 * versions read as an approval of every call in the approver's own right. Fixtures:
 * `test/fixtures/approval-record/`.
 */
export const APPROVAL_RECORD_SCHEMA_VERSION = 3;

/**
 * What a decision does with a turn: `approve` (every call, or some calls: `choices`), `reject`
 * (every call), or `edit`: an approver's new arguments for some calls, a new proposal that goes on
 * a fresh card for approval (nothing runs on an edit).
 */
export type Decision = 'approve' | 'reject' | 'edit';

/**
 * Where an approver decided: `api` (the HTTP API, and the inbox page on it) or `slack` (a button
 * of a Slack message). Both go through the same decision use case; the audit says which.
 */
export const DECISION_CHANNELS = ['api', 'slack'] as const;
export type DecisionChannel = (typeof DECISION_CHANNELS)[number];

const turnSchema = z.number().check(z.int(), z.nonnegative());
const channelSchema = z.enum(DECISION_CHANNELS);

/**
 * What the card put before the approver, recorded with the decision: each call and whether a
 * preview was captured for it. The per-viewer read gate is not re-run here: it would cost a
 * record read per previewing call on the resume path.
 */
export const cardShownSchema = z.object({
  calls: z.array(
    z.object({
      index: turnSchema,
      tool: z.string(),
      arguments: z.unknown(),
      preview: z.enum(['captured', 'refused', 'failed', 'none']),
    }),
  ),
});
export type CardShown = z.infer<typeof cardShownSchema>;

const decisionFields = {
  runId: z.string(),
  turn: turnSchema,
  /** `cancel`: the run was cancelled while this turn waited; it takes the claim so no approval can. */
  decision: z.enum(['approve', 'reject', 'edit', 'cancel']),
  digest: z.string(),
  decidedBy: z.string(),
  decidedAt: z.string(),
  reason: z.optional(z.string()),
  /** The distinct approvers whose approvals released the turn (k-of-n, K > 1), sorted. */
  approvedBy: z.optional(z.array(z.string())),
  /** Who `decidedBy` acted for as their delegate (version 6); absent: in their own right. */
  actingFor: z.optional(z.string()),
  /** Of `approvedBy`, those who approved as someone's delegate, and for whom (version 6). */
  delegatedApprovals: z.optional(z.array(delegatedApprovalSchema)),
  /**
   * Per-call decisions (version 6): what the decision did with each call of the card, a rejected
   * call's reason with it. Absent: `decision` applies to every call (the whole-turn body).
   */
  choices: z.optional(z.array(callChoiceSchema)),
  /**
   * An edit (version 6): the calls it rewrote and their new arguments, as JSON text (a model's
   * and an approver's arguments are any JSON, stored as text like `cardShown`): `[{index, tool,
   * arguments}]`. Read it with {@link readEditsOnRecord}.
   */
  edits: z.optional(z.string()),
};

/**
 * The audit record of a decision; it is also the exactly-once claim. `cardShown` is the card as
 * shown, as JSON text ({@link serializeCardShown}; read it with {@link readCardShown}): a model
 * proposes any JSON (numbers past 2^53 or DynamoDB's 1e125, empty or `constructor` keys, more
 * than DynamoDB's 32 levels), and stored as native attributes it made the record unwritable,
 * so neither approve nor reject could be recorded (issue #20).
 */
export const decisionRecordSchema = z.object({
  schemaVersion: z.literal(DECISION_RECORD_SCHEMA_VERSION),
  ...decisionFields,
  cardShown: z.string(),
  /**
   * The request that wrote the claim: an SDK retry of the claim that meets it knows the claim
   * for its own and goes on to deliver (another request's is answered as a repeat).
   */
  claimId: z.string().check(z.minLength(1)),
  /** Where `decidedBy` decided (a cancel is always `api`). */
  channel: channelSchema,
});

/** A decision record as this version writes it: a claim, named by the request that made it. */
export type DecisionClaim = z.infer<typeof decisionRecordSchema>;

/** A decision record as read: one written before version 3 names no claim. */
export type DecisionRecord = Omit<DecisionClaim, 'claimId'> & { claimId?: string };

/** Version 4 records: the channel, read as the current version, decided in the approvers' own right. */
const version4Schema = z.pipe(
  z.object({
    schemaVersion: z.literal(4),
    ...decisionFields,
    cardShown: z.string(),
    claimId: z.string().check(z.minLength(1)),
    channel: channelSchema,
  }),
  z.transform(
    ({ schemaVersion: _written, ...record }): DecisionRecord => ({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      ...record,
    }),
  ),
);

/** Version 3 records: a claim id, decided through the API (the only channel there was). */
const version3Schema = z.pipe(
  z.object({
    schemaVersion: z.literal(3),
    ...decisionFields,
    cardShown: z.string(),
    claimId: z.string().check(z.minLength(1)),
  }),
  z.transform(
    ({ schemaVersion: _written, ...record }): DecisionRecord => ({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      ...record,
      channel: 'api',
    }),
  ),
);

/** Version 2 records: `cardShown` as text, without a claim id, decided through the API. */
const version2Schema = z.pipe(
  z.object({ schemaVersion: z.literal(2), ...decisionFields, cardShown: z.string() }),
  z.transform(
    ({ schemaVersion: _written, ...record }): DecisionRecord => ({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      ...record,
      channel: 'api',
    }),
  ),
);

/** Version 1 (and unversioned) records: `cardShown` as native attributes, decided through the API. */
const version1Schema = z.pipe(
  z.object({ schemaVersion: z.optional(z.literal(1)), ...decisionFields, cardShown: cardShownSchema }),
  z.transform(
    ({ schemaVersion: _written, cardShown, ...record }): DecisionRecord => ({
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      ...record,
      cardShown: canonicalJson(cardShown),
      channel: 'api',
    }),
  ),
);

/**
 * One approver's approval of one turn (k-of-n): claimed once per (run, turn, approver) with a
 * conditional write and kept for the audit. It names the digest it approved, so every approval
 * that counts toward a delivery is bound to the same turn.
 */
const approvalFields = {
  runId: z.string().check(z.minLength(1)),
  turn: turnSchema,
  digest: z.string().check(z.minLength(1)),
  approvedBy: z.string().check(z.minLength(1)),
  approvedAt: z.string(),
};

/** Who approved for whom and what an approval of some calls did (version 3). */
const approvalDelegationFields = {
  /** The approver who is away and for whom `approvedBy` approved as their delegate. */
  actingFor: z.optional(z.string().check(z.minLength(1))),
  /**
   * Per-call decisions: what this approval did with each call, reasons included, and the key of
   * that content (`contentOfChoices`). Absent: every call approved.
   */
  choices: z.optional(z.array(callChoiceSchema)),
  content: z.optional(z.string()),
};

export const approvalRecordSchema = z.object({
  schemaVersion: z.literal(APPROVAL_RECORD_SCHEMA_VERSION),
  ...approvalFields,
  /** Where `approvedBy` approved. */
  channel: channelSchema,
  ...approvalDelegationFields,
});
export type ApprovalRecord = z.infer<typeof approvalRecordSchema>;

/** Reads a stored decision record of any known version; a future one or a prototype key does not parse. */
export const readableDecisionRecordSchema = refusingPrototypeKeys<DecisionRecord>(
  z.union([decisionRecordSchema, version4Schema, version3Schema, version2Schema, version1Schema]),
);

/** Reads a stored approval record of any known version, as the audit does (version 1 and unversioned: the API's). */
export const readableApprovalRecordSchema = refusingPrototypeKeys<ApprovalRecord>(
  z.union([
    approvalRecordSchema,
    z.pipe(
      z.object({ schemaVersion: z.literal(2), ...approvalFields, channel: channelSchema }),
      z.transform(
        ({ schemaVersion: _written, ...record }): ApprovalRecord => ({
          schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
          ...record,
        }),
      ),
    ),
    z.pipe(
      z.object({ schemaVersion: z.optional(z.literal(1)), ...approvalFields }),
      z.transform(
        ({ schemaVersion: _written, ...record }): ApprovalRecord => ({
          schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
          ...record,
          channel: 'api',
        }),
      ),
    ),
  ]),
);

/** The account of a turn cancelled while it waited: no card was decided, so none was shown. */
export const NO_CARD_SHOWN: string = canonicalJson({ calls: [] });

/**
 * The audit's account of a card, as the record keeps it: JSON text of each call as the approver
 * saw it (canonical, so equal cards read the same). A refusal line is not a captured preview.
 *
 * @example
 * serializeCardShown(card) // '{"calls":[{"arguments":{…},"index":0,"preview":"captured","tool":"update_page_metadata"}]}'
 */
export function serializeCardShown(card: ApprovalCard): string {
  const shown: CardShown = {
    calls: card.pendingCalls.map((call) => ({
      index: call.index,
      tool: call.tool,
      arguments: call.arguments,
      preview: classifyPreviewShown(call.preview),
    })),
  };
  return canonicalJson(shown);
}

/**
 * The calls a decision record says its card showed; a text that is not such an account (or
 * holds a prototype key outside the arguments) is refused like any stored shape.
 *
 * @example
 * readCardShown(record.cardShown).calls[0]?.preview // 'captured'
 */
export function readCardShown(cardShown: string): CardShown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(cardShown);
  } catch {
    throw refusal('decision record');
  }
  const read = readableCardShownSchema.safeParse(parsed);
  if (!read.success) throw refusal('decision record');
  return read.data;
}

const editsOnRecordSchema = z.array(
  z.object({ index: turnSchema, tool: z.string(), arguments: z.unknown() }),
);
export type EditOnRecord = z.infer<typeof editsOnRecordSchema>[number];

/**
 * The edits a decision record holds (none when it is no edit); a text that is not such a list (or
 * holds a prototype key outside the arguments) is refused like any stored shape.
 *
 * @example
 * readEditsOnRecord(record) // [{ index: 0, tool: 'update_page_metadata', arguments: {…} }]
 */
export function readEditsOnRecord(record: Pick<DecisionRecord, 'edits'>): EditOnRecord[] {
  if (record.edits === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(record.edits);
  } catch {
    throw refusal('decision record');
  }
  const read = refusingPrototypeKeys<EditOnRecord[]>(editsOnRecordSchema).safeParse(parsed);
  if (!read.success) throw refusal('decision record');
  return read.data;
}

const readableCardShownSchema = refusingPrototypeKeys<CardShown>(cardShownSchema);

function classifyPreviewShown(preview: CallPreview | undefined): CardShown['calls'][number]['preview'] {
  if (preview === undefined) return 'none';
  if (preview.failed) return 'failed';
  return preview.refused === true ? 'refused' : 'captured';
}
