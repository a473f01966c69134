import * as z from 'zod/mini';
import { approverGroupsSchema } from './card-routing.js';

/** At most this many steps: each is one schedule at the pause and, when it fires, one index write per group. */
export const MAX_ESCALATION_STEPS = 5;

/** A year: a later step could never fire before the approval window closes. */
const MAX_ESCALATION_MINUTES = 525_600;

/**
 * One rung of a configuration's escalation ladder: after `afterMinutes` unanswered (counted from
 * the pause; fractions allowed, 0.5 is 30 seconds), the card is also routed to `approverGroups`
 * and `Run Awaiting Approval` goes out again with the reason `escalated`.
 */
export const escalationStepSchema = z.strictObject({
  afterMinutes: z.number().check(z.gte(1 / 60), z.lte(MAX_ESCALATION_MINUTES)),
  approverGroups: approverGroupsSchema,
});
export type EscalationStep = z.infer<typeof escalationStepSchema>;

/** A configuration's escalation ladder: its steps come strictly later one after the other. */
export const escalationLadderSchema = z.array(escalationStepSchema).check(
  z.minLength(1),
  z.maxLength(MAX_ESCALATION_STEPS),
  z.superRefine((steps, context) => {
    steps.forEach((step, position) => {
      const before = steps[position - 1];
      if (before !== undefined && step.afterMinutes <= before.afterMinutes) {
        context.issues.push({
          code: 'custom',
          message: `must be later than step ${position - 1} (${before.afterMinutes} minutes)`,
          path: [position, 'afterMinutes'],
          input: step.afterMinutes,
        });
      }
    });
  }),
);
export type EscalationLadder = z.infer<typeof escalationLadderSchema>;

const stepPositionSchema = z.number().check(z.int(), z.nonnegative(), z.lte(MAX_ESCALATION_STEPS));

/**
 * A card's escalation: the ladder's steps at their times (absolute, from the pause) and how far it
 * went. `reached` steps have routed the card to their groups; `notified` steps have sent their
 * event (the escalation's outbox: a step is routed first, announced after, each once).
 */
export const cardEscalationSchema = z.object({
  steps: z
    .array(z.object({ at: z.string(), approverGroups: z.array(z.string()) }))
    .check(z.maxLength(MAX_ESCALATION_STEPS)),
  reached: stepPositionSchema,
  notified: stepPositionSchema,
});
export type CardEscalation = z.infer<typeof cardEscalationSchema>;

/** One escalation step of one card to fire at `at`: what a timer carries (identifiers only). */
export interface EscalationTimer {
  runId: string;
  turn: number;
  digest: string;
  step: number;
  at: string;
}

/**
 * The card's escalation from the run's ladder: each step at the pause plus its minutes. A step
 * that would come at or after the card closes is left out (nobody could act on it).
 *
 * @example
 * planCardEscalation([{ afterMinutes: 30, approverGroups: ['leads'] }], pausedAt, expiresAt)
 * // { steps: [{ at: '…09:45:00.000Z', approverGroups: ['leads'] }], reached: 0, notified: 0 }
 */
export function planCardEscalation(
  ladder: EscalationLadder | undefined,
  pausedAt: Date,
  expiresAt: Date,
): CardEscalation | undefined {
  const steps = (ladder ?? [])
    .map((step) => ({
      at: new Date(pausedAt.getTime() + Math.round(step.afterMinutes * 60_000)),
      approverGroups: [...new Set(step.approverGroups)].sort(),
    }))
    .filter((step) => step.at.getTime() < expiresAt.getTime())
    .map((step) => ({ at: step.at.toISOString(), approverGroups: step.approverGroups }));
  return steps.length === 0 ? undefined : { steps, reached: 0, notified: 0 };
}

/**
 * The timers a waiting card still needs: one per step not yet routed. Arming them again is
 * harmless (a timer is named by run, turn and step, and a step fires once), so a pause that is
 * entered again (a retry, a local restart) re-arms what it lost.
 *
 * @example
 * escalationTimersOf(storedCard) // [{ runId, turn: 3, digest, step: 0, at: '…' }]
 */
export function escalationTimersOf(card: {
  runId: string;
  turn: number;
  digest: string;
  escalation?: CardEscalation | undefined;
}): EscalationTimer[] {
  const escalation = card.escalation;
  if (escalation === undefined) return [];
  return (
    escalation.steps
      .map((step, position) => ({
        runId: card.runId,
        turn: card.turn,
        digest: card.digest,
        step: position,
        at: step.at,
      }))
      // A step is routed before it is announced: one not yet announced still needs its timer.
      .filter((timer) => timer.step >= escalation.notified)
  );
}
