import * as z from 'zod/mini';
import { refusingPrototypeKeys } from '../persisted-shape.js';
import { DECISION_GATES, requiredApprovalsSchema } from '../policy/policy-floor.js';

/**
 * The plaintext index entry of a waiting run: what the inbox lists and the decision gate reads
 * without decrypting anything but the token. Version 3 names the wait whose token it holds and
 * carries the pause's outbox (whether `Run Awaiting Approval` went out); version 2 says
 * `open | closed` and keeps why a card closed; version 1 (no `schemaVersion`, `waiting | decided`,
 * where `decided` also meant expired, failed or cancelled) is still read. Fixtures:
 * `test/fixtures/stored-card/`.
 */
export const STORED_CARD_SCHEMA_VERSION = 3;

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
  /** Names of the tools in the turn that write (the gate checks the approver may run each). */
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

/** Whether the pause's `Run Awaiting Approval` event went out: written `pending` with the card. */
export const CARD_NOTIFICATIONS = ['pending', 'sent'] as const;

const stateFields = {
  state: z.enum(['open', 'closed']),
  /** Why the card closed; absent while open, and on cards closed before it was recorded. */
  closedBecause: z.optional(z.enum(CARD_CLOSINGS)),
};

/** The stored card as this version writes it. */
export const storedCardSchema = z.object({
  schemaVersion: z.literal(STORED_CARD_SCHEMA_VERSION),
  ...storedCardFields,
  ...stateFields,
  /**
   * The AwaitApproval attempt whose task token the card holds: a delivery that met a spent
   * token closes the card only if no later attempt sealed a newer one. Absent before version 3.
   */
  waitId: z.optional(z.string()),
  /** The outbox: `pending` until the event is sent, then `sent`. Absent (before version 3): sent. */
  notification: z.optional(z.enum(CARD_NOTIFICATIONS)),
});
export type StoredCard = z.infer<typeof storedCardSchema>;

const version2Schema = z.pipe(
  z.object({ schemaVersion: z.literal(2), ...storedCardFields, ...stateFields }),
  z.transform(
    ({ schemaVersion: _written, ...card }): StoredCard => ({
      schemaVersion: STORED_CARD_SCHEMA_VERSION,
      ...card,
    }),
  ),
);

const version1Schema = z.pipe(
  z.object({
    // A later item that version 1 code closed (`decided`) while a deployment rolled out
    // reads as this version too: its other attributes are the same.
    schemaVersion: z.optional(z.union([z.literal(2), z.literal(STORED_CARD_SCHEMA_VERSION)])),
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
  z.union([storedCardSchema, version2Schema, version1Schema]),
);

/**
 * Whether the card still takes decisions.
 *
 * @example
 * if (!isCardOpen(stored)) return answerClosedCard(stored);
 */
export function isCardOpen(card: Pick<StoredCard, 'state'>): boolean {
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
