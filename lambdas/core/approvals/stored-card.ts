import * as z from 'zod/mini';
import { refusingPrototypeKeys } from '../persisted-shape.js';
import { DECISION_GATES, requiredApprovalsSchema } from '../policy/policy-floor.js';
import { cardEscalationSchema } from './escalation-ladder.js';
import { type CallGuard, callGuardSchema } from './needs-human-approval.js';

/**
 * The plaintext index entry of a waiting run: what the inbox lists and the decision gate reads
 * without decrypting anything but the token. Version 5 carries the card's escalation (its steps'
 * times and groups, how far it went), which k-of-n approvals a delegate gave acting for someone
 * (`delegatedApprovals`) or approved some calls only (`approvalContents`), who edited its calls
 * (`editedBy`) and which calls are decided together (`decisionGroups`); version 4 and earlier read
 * as version 5 without them. Version 4 names the wait whose token it holds
 * (`waitId`) and carries the pause's outbox (`notification`: did `Run Awaiting Approval` go
 * out); version 3 records how each call was guarded when the card was put (`callGuards`) and
 * whose k-of-n approvals lapsed; version 2 (`open | closed`, why a card closed) and version 1 (no
 * `schemaVersion`, `waiting | decided`, where `decided` also meant expired, failed or cancelled)
 * are still read. Fixtures: `test/fixtures/stored-card/`.
 */
export const STORED_CARD_SCHEMA_VERSION = 5;

/** Why a card stopped taking decisions. */
export const CARD_CLOSINGS = [
  /** A decision was delivered (or its results recorded). */
  'decided',
  /** A record changed after the card was shown: the same calls wait on a fresh card. */
  'reopened',
  'cancelled',
  'expired',
  'failed',
  /** The run ended (cancelled or failed) while its card was being put. */
  'ended',
] as const;
export type CardClosing = (typeof CARD_CLOSINGS)[number];

const binarySchema = z.custom<Uint8Array>((value) => value instanceof Uint8Array);

const storedCardFields = {
  runId: z.string(),
  owner: z.string(),
  label: z.string(),
  configurationId: z.string(),
  turn: z.number().check(z.int(), z.nonnegative()),
  digest: z.string(),
  pausedAt: z.string(),
  expiresAt: z.string(),
  toolNames: z.array(z.string()),
  /**
   * Names of the tools whose calls need approval: writes, reads that ask, and tools whose effect
   * could not be confirmed (the name predates the last two). Every gate covers exactly these.
   */
  writeToolNames: z.array(z.string()),
  fourEyes: z.boolean(),
  /** Distinct approvers the turn needs (k-of-n). Absent on cards paused before k-of-n: 1. */
  requiredApprovals: z.optional(requiredApprovalsSchema),
  /** Absent on cards paused before the record gate: `tool`. */
  decisionGate: z.optional(z.enum(DECISION_GATES)),
  /** Who has approved this turn so far (k-of-n), sorted. Absent: nobody yet. */
  approvedBy: z.optional(z.array(z.string())),
  revealRejectionReason: z.boolean(),
  /** The approver groups the card is routed to; absent: every approver (cards before routing). */
  approverGroups: z.optional(z.array(z.string())),
  sealedCard: binarySchema,
  sealedToken: binarySchema,
};

/** How one call of the card was guarded when the card was put: what its decision is taken under. */
export const callGuardEntrySchema = z.object({
  index: z.number().check(z.int(), z.nonnegative()),
  tool: z.string(),
  guard: callGuardSchema,
});
export type CallGuardEntry = z.infer<typeof callGuardEntrySchema>;

const closingFields = {
  state: z.enum(['open', 'closed']),
  /** Why the card closed; absent while open, and on cards closed before it was recorded. */
  closedBecause: z.optional(z.enum(CARD_CLOSINGS)),
};

const version3Fields = {
  /**
   * Each call's guard when the card was put, by call. Absent on cards put before version 3 (their
   * guarded calls are those of `writeToolNames`), and on such a card once closed or re-entered.
   */
  callGuards: z.optional(z.array(callGuardEntrySchema)),
  /**
   * k-of-n: approvers whose approval stopped counting when a decision came to complete: their
   * current record no longer held the authority approving needs. Sorted; absent: none.
   */
  lapsedApprovers: z.optional(z.array(z.string())),
};

/** Whether the pause's `Run Awaiting Approval` event went out: written `pending` with the card. */
export const CARD_NOTIFICATIONS = ['pending', 'sent'] as const;

const version4Fields = {
  /**
   * The AwaitApproval attempt whose task token the card holds: a delivery that met a spent
   * token closes the card only if no later attempt sealed a newer one. Absent before version 4.
   */
  waitId: z.optional(z.string()),
  /** The outbox: `pending` until the event is sent, then `sent`. Absent (before version 4): sent. */
  notification: z.optional(z.enum(CARD_NOTIFICATIONS)),
};

/** A k-of-n approval a delegate gave acting for an approver who is away (delegation). */
export const delegatedApprovalSchema = z.object({
  approver: z.string().check(z.minLength(1)),
  actingFor: z.string().check(z.minLength(1)),
});
export type DelegatedApproval = z.infer<typeof delegatedApprovalSchema>;

/**
 * A k-of-n approval of some calls only (per-call decisions): what it approved, as the key two
 * approvers must share to count together (`contentOfChoices`). An approval with no entry approved
 * every call.
 */
export const approvalContentSchema = z.object({
  approver: z.string().check(z.minLength(1)),
  content: z.string().check(z.minLength(1)),
});
export type ApprovalContent = z.infer<typeof approvalContentSchema>;

/** The stored card as this version writes it. */
export const storedCardSchema = z.object({
  schemaVersion: z.literal(STORED_CARD_SCHEMA_VERSION),
  ...storedCardFields,
  ...version3Fields,
  ...version4Fields,
  /** The configuration's escalation ladder at this card's times; absent: the card does not escalate. */
  escalation: z.optional(cardEscalationSchema),
  /**
   * k-of-n approvals that a delegate gave acting for someone away, by approver (each also in
   * `approvedBy`: a person counts once, however many they act for). Absent: none.
   */
  delegatedApprovals: z.optional(z.array(delegatedApprovalSchema)),
  /** k-of-n approvals of some calls only, by approver (each also in `approvedBy`). Absent: none. */
  approvalContents: z.optional(z.array(approvalContentSchema)),
  /**
   * Who edited calls of this turn (the card is an approver's proposal, not the model's): under
   * four-eyes or k-of-n someone else must approve it. Absent: the model's proposal as it was.
   */
  editedBy: z.optional(z.string()),
  /** Indexes of calls that must be decided together (tools declare it), each group ascending. */
  decisionGroups: z.optional(z.array(z.array(z.number().check(z.int(), z.nonnegative())))),
  ...closingFields,
});
export type StoredCard = z.infer<typeof storedCardSchema>;

/** A version 4 card reads as version 5 that neither escalates nor holds delegated approvals or edits. */
const version4Schema = z.pipe(
  z.object({
    schemaVersion: z.literal(4),
    ...storedCardFields,
    ...version3Fields,
    ...version4Fields,
    ...closingFields,
  }),
  z.transform(
    ({ schemaVersion: _written, ...card }): StoredCard => ({
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      ...card,
    }),
  ),
);

/** A version 3 card reads as the current one without a wait id, its event sent. */
const version3Schema = z.pipe(
  z.object({ schemaVersion: z.literal(3), ...storedCardFields, ...version3Fields, ...closingFields }),
  z.transform(
    ({ schemaVersion: _written, ...card }): StoredCard => ({
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      ...card,
    }),
  ),
);

/** A version 2 card reads as the current one without call guards: its `writeToolNames` say what it guarded. */
const version2Schema = z.pipe(
  z.object({ schemaVersion: z.literal(2), ...storedCardFields, ...closingFields }),
  z.transform(
    ({ schemaVersion: _written, ...card }): StoredCard => ({
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      ...card,
    }),
  ),
);

const version1Schema = z.pipe(
  z.object({
    // A version 2 item that version 1 code closed (`decided`) while a deployment rolled out
    // reads as version 2 too: its other attributes are the same.
    schemaVersion: z.optional(z.literal(2)),
    ...storedCardFields,
    state: z.enum(['waiting', 'decided']),
  }),
  z.transform(
    ({ state, schemaVersion: _written, ...card }): StoredCard => ({
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      ...card,
      state: state === 'waiting' ? 'open' : 'closed',
    }),
  ),
);

/**
 * Reads a stored card of any known version as the current one; a future version, a malformed
 * item or a prototype key does not parse (the caller refuses it like a tampered blob).
 *
 * @example
 * const parsed = readableStoredCardSchema.safeParse(item);
 */
export const readableStoredCardSchema = refusingPrototypeKeys<StoredCard>(
  z.union([storedCardSchema, version4Schema, version3Schema, version2Schema, version1Schema]),
);

/**
 * Whether the card is undecided: it still takes decisions. Its persisted state keeps the name
 * `open`; code says undecided, and reading a card's sealed content is `unseal`.
 *
 * @example
 * if (!isCardUndecided(stored)) return answerClosedCard(stored);
 */
export function isCardUndecided(card: Pick<StoredCard, 'state'>): boolean {
  return card.state === 'open';
}

/**
 * Whether the card's `Run Awaiting Approval` event still has to go out (a pause that was retried
 * before it sent it). A card from before the outbox was notified in the step that put it.
 *
 * @example
 * if (isNotificationPending(card)) await notifier.runAwaitingApproval(event);
 */
export function isNotificationPending(card: Pick<StoredCard, 'notification'>): boolean {
  return card.notification === 'pending';
}

/**
 * How the card guarded one of its calls: its recorded guard, or on a card put before version 3,
 * `write` for a call of one of its `writeToolNames` (what every gate covered) and `none` otherwise.
 * An entry that names another tool than the call is no entry: it covers nothing.
 *
 * @example
 * guardOnCard(stored, { index: 0, tool: 'tickets__create_ticket' }) // 'unconfirmed'
 */
export function guardOnCard(
  card: Pick<StoredCard, 'callGuards' | 'writeToolNames'>,
  call: { index: number; tool: string },
): CallGuard {
  if (card.callGuards === undefined) return card.writeToolNames.includes(call.tool) ? 'write' : 'none';
  const entry = card.callGuards.find((each) => each.index === call.index && each.tool === call.tool);
  return entry?.guard ?? 'none';
}
