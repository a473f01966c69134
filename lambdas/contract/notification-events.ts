import * as z from 'zod/mini';
import { CARD_CLOSINGS } from '../core/approvals/stored-card.js';

/**
 * The events countersign puts on EventBridge (docs/approvers.md, "Notifications"), as the
 * notifier writes them, the construct's rules match them and the channels read them: one table,
 * so a rule cannot match a name the notifier does not send.
 */
export const NOTIFICATION_EVENT_SOURCE = 'countersign';

export const NOTIFICATION_DETAIL_TYPES = {
  awaitingApproval: 'Run Awaiting Approval',
  cardClosed: 'Card Closed',
  externalRunAnswered: 'External Run Answered',
} as const;

const runIdSchema = z.string().check(z.minLength(1), z.maxLength(200));

/** `Run Awaiting Approval`'s detail: the run, its tools, when it paused, its card's groups. */
export const awaitingApprovalDetailSchema = z.object({
  runId: runIdSchema,
  toolNames: z.array(z.string()),
  pausedAt: z.string(),
  approverGroups: z.array(z.string()),
  /** `escalated`: the card reached a further group (docs/approvers.md); absent from earlier senders. */
  reason: z.optional(z.enum(['paused', 'escalated'])),
});

/** `Card Closed`'s detail: the run and turn whose card stopped taking decisions, and why. */
export const cardClosedDetailSchema = z.object({
  runId: runIdSchema,
  turn: z.number().check(z.int(), z.nonnegative()),
  because: z.enum(CARD_CLOSINGS),
  closedAt: z.string(),
  approverGroups: z.array(z.string()),
});
