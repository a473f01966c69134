import * as z from 'zod/mini';
import {
  DECISION_RECORD_SCHEMA_VERSION,
  type DecisionClaim,
  type DecisionRecord,
  NO_CARD_SHOWN,
} from '../approvals/decision-record.js';
import { CountersignError } from '../errors.js';
import { isAdmin, type UserProfile } from '../identity.js';
import type { RunDependencies } from '../run-dependencies.js';
import type { RunRecord } from '../run-record.js';
import { TEXTS } from '../texts.js';

export const cancelRequestSchema = z.strictObject({
  reason: z.optional(z.string().check(z.maxLength(2000))),
});
export type CancelRequest = z.infer<typeof cancelRequestSchema>;

export type CancelOutcome = {
  kind: 'cancelled';
  runId: string;
  status: 'cancelled';
  cancelledBy: string;
  cancelledAt: string;
  reason?: string;
  /** True when the run was already cancelled: the answer is the first cancel's. */
  repeated: boolean;
};

export type CancelRunDependencies = Pick<
  RunDependencies,
  'runs' | 'executions' | 'clock' | 'logger' | 'metrics' | 'newId'
>;

/** A run moves between `running` and `waiting` while a cancel is under way; a few rounds settle it. */
const MAXIMUM_ATTEMPTS = 5;

/**
 * POST /runs/{id}/cancel, by the run's owner or an admin (anyone else gets the 404 of an
 * unknown run). Order matters:
 * 1. a waiting run's turn is claimed with a `cancel` decision, the same conditional put an
 *    approval takes, so a cancel racing a decision has exactly one winner; a cancel that loses
 *    to an approval is a 409 (its writes are already being carried out);
 * 2. the run moves to `cancelled` only from the status it was read in (conditional update), so
 *    no step's later write resurrects it: every step writes with an expected status;
 * 3. then the execution is stopped and the card closed. Both are idempotent, so a repeated
 *    cancel (200, the same outcome) also finishes a cancel that failed half-way.
 */
export async function cancelRun(
  dependencies: CancelRunDependencies,
  principal: UserProfile,
  runId: string,
  request: CancelRequest,
): Promise<CancelOutcome> {
  for (let attempt = 0; attempt < MAXIMUM_ATTEMPTS; attempt += 1) {
    const record = await dependencies.runs.getRunRecord(runId);
    if (!record || (record.owner !== principal.userId && !isAdmin(principal))) {
      throw new CountersignError('not-found', TEXTS.runNotFound);
    }
    if (record.status === 'cancelled') {
      await stopAndClose(dependencies, record);
      return toCancelOutcome(record, true);
    }
    if (record.status !== 'running' && record.status !== 'waiting') {
      throw new CountersignError('conflict', TEXTS.cancelEnded(record.status));
    }
    const now = dependencies.clock.now().toISOString();
    if (record.status === 'waiting') await claimWaitingTurn(dependencies, principal, record, request, now);
    const changes = cancelledChanges(principal.userId, request.reason, now);
    const outcome = await dependencies.runs.updateRun(runId, changes, {
      expectStatus: [record.status],
      removeFields: CANCELLED_REMOVED_FIELDS,
    });
    if (outcome.kind === 'condition-failed') continue; // it moved on meanwhile: read it again
    const cancelled: RunRecord = { ...record, ...changes };
    await stopAndClose(dependencies, cancelled);
    dependencies.metrics.count('RunsCancelled');
    dependencies.logger.info('run cancelled', { runId, from: record.status, turn: record.turn });
    return toCancelOutcome(cancelled, false);
  }
  // Each round lost to a step that moved the run on; the caller may simply try again.
  throw new CountersignError('conflict', TEXTS.cancelKeptChanging);
}

/**
 * Takes the waiting turn's decision claim. A claim already held by a rejection or by an earlier
 * cancel lets the cancel go on (nothing will be written); one held by an approval wins.
 */
async function claimWaitingTurn(
  dependencies: CancelRunDependencies,
  principal: UserProfile,
  record: RunRecord,
  request: CancelRequest,
  now: string,
): Promise<void> {
  const card = await dependencies.runs.getCard(record.runId);
  const claim: DecisionClaim = {
    schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
    claimId: dependencies.newId(),
    runId: record.runId,
    turn: record.turn,
    decision: 'cancel',
    digest: card?.turn === record.turn ? card.digest : '',
    decidedBy: principal.userId,
    decidedAt: now,
    ...(request.reason ? { reason: request.reason } : {}),
    // A cancel reviews no card: the audit says so instead of restating what the approver saw.
    cardShown: NO_CARD_SHOWN,
    channel: 'api',
  };
  const outcome = await dependencies.runs.claimDecision(claim);
  if (outcome.kind === 'already-decided' && outcome.existing.decision === 'approve') {
    throw new CountersignError('conflict', TEXTS.cancelAfterApproval);
  }
}

/** A cancelled run leaves the inbox's tool names behind: it waits for nothing any more. */
const CANCELLED_REMOVED_FIELDS = ['pendingToolNames'] as const;

/** What a cancel writes on the run record, by the cancel request or by a re-driven step. */
function cancelledChanges(cancelledBy: string, reason: string | undefined, now: string) {
  return {
    status: 'cancelled',
    cancelledBy,
    ...(reason ? { cancellationReason: reason } : {}),
    endedAt: now,
    updatedAt: now,
  } as const;
}

async function stopAndClose(dependencies: CancelRunDependencies, record: RunRecord): Promise<void> {
  await dependencies.executions.stopExecution({
    runId: record.runId,
    ...(record.executionId === undefined ? {} : { executionId: record.executionId }),
  });
  await dependencies.runs.closeCard(record.runId, 'cancelled');
}

function toCancelOutcome(record: RunRecord, repeated: boolean): CancelOutcome {
  return {
    kind: 'cancelled',
    runId: record.runId,
    status: 'cancelled',
    cancelledBy: record.cancelledBy ?? '',
    cancelledAt: record.endedAt ?? record.updatedAt,
    ...(record.cancellationReason ? { reason: record.cancellationReason } : {}),
    repeated,
  };
}

/**
 * A waiting turn whose claim is a cancel, found by a re-driven execution (the cancel request
 * failed after its claim): the claim is the cancel, so the run ends `cancelled` by its author.
 */
export async function finishClaimedCancel(
  dependencies: Pick<RunDependencies, 'runs' | 'clock'>,
  claim: DecisionRecord,
): Promise<void> {
  const now = dependencies.clock.now().toISOString();
  const outcome = await dependencies.runs.updateRun(
    claim.runId,
    cancelledChanges(claim.decidedBy, claim.reason, now),
    { expectStatus: ['waiting'], removeFields: CANCELLED_REMOVED_FIELDS },
  );
  if (outcome.kind === 'written') await dependencies.runs.closeCard(claim.runId, 'cancelled');
}
