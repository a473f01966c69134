import * as z from 'zod/mini';
import { type CallChoice, callChoicesRequestSchema } from '../approvals/call-choices.js';
import { callEditsRequestSchema } from '../approvals/call-edits.js';
import { isNothingRunnable } from '../approvals/call-runnability.js';
import { readStoredCard, type UnsealedCard, unsealCard, unsealCardToken } from '../approvals/card-reader.js';
import { isCardRoutedTo, reachesThroughGroups } from '../approvals/card-routing.js';
import { effectiveTurnPolicy } from '../approvals/decision-gate.js';
import {
  DECISION_RECORD_SCHEMA_VERSION,
  type Decision,
  type DecisionChannel,
  type DecisionClaim,
  type DecisionRecord,
  readEditsOnRecord,
  serializeCardShown,
} from '../approvals/decision-record.js';
import { type DelegatedApproval, isCardUndecided, type StoredCard } from '../approvals/stored-card.js';
import { type ApprovalTally, tallyApproval } from '../approvals/tally-approval.js';
import { CountersignError, isCountersignError } from '../errors.js';
import { requireGrant, type UserProfile } from '../identity.js';
import type { ClaimOutcome } from '../ports.js';
import type { DecisionDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';
import { assertDecisionGate, type Decider, readDelegator } from './decision-authority.js';
import { deliverDecision } from './deliver-decision.js';
import { markRunExpired } from './end-run.js';
import {
  approvedIndexesOf,
  contentOfRecord,
  contentOfRequest,
  serializeEdits,
  shapeOnCard,
} from './shape-decision.js';

export const decisionRequestSchema = z
  .strictObject({
    // Optional here so that a missing digest is answered like a stale one (409), not a 400.
    digest: z.optional(z.string().check(z.maxLength(200))),
    /** `edit`: new arguments for some calls (`edits`), a proposal that goes on a fresh card. */
    decision: z.enum(['approve', 'reject', 'edit']),
    reason: z.optional(z.string().check(z.maxLength(2000))),
    /**
     * Delegation: the approver who is away and named this approver their delegate; the decision is
     * taken acting for them, with authority both hold (docs/approvers.md, "Delegation").
     */
    actingFor: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
    /** Per-call decisions: each names a call and what to do with it; the others take `decision`. */
    calls: z.optional(callChoicesRequestSchema),
    /** With `decision: "edit"`: each call's new arguments (docs/approvers.md, "Approve with edits"). */
    edits: z.optional(callEditsRequestSchema),
  })
  .check(
    z.refine(
      (body: { decision: string; edits?: unknown }) =>
        (body.decision === 'edit') === (body.edits !== undefined),
      {
        message: 'give "edits" with "decision": "edit", and only then',
        path: ['edits'],
      },
    ),
    z.refine(
      (body: { decision: string; calls?: unknown }) =>
        !(body.decision === 'edit' && body.calls !== undefined),
      {
        message: 'an edit takes no per-call choices; approve or reject the edited card',
        path: ['calls'],
      },
    ),
  );
export type DecisionRequest = z.infer<typeof decisionRequestSchema>;

export type DecisionOutcome =
  | {
      kind: 'decided';
      runId: string;
      turn: number;
      decision: Decision;
      /** Per-call decisions: what the decision did with each call of the card. */
      choices?: CallChoice[];
      /** True when this request repeated a decision already on record (same answer). */
      repeated: boolean;
    }
  | {
      /** k-of-n: this approval is on record, and the turn still needs more distinct approvers. */
      kind: 'approval-recorded';
      runId: string;
      turn: number;
      approvals: ApprovalTally;
      message: string;
    };

/**
 * A claim older than this whose card still waits was never delivered (its request failed
 * between the claim and SendTaskSuccess): a repeat of the same decision delivers it again.
 * Younger claims may still be in flight, so a repeat only answers. The system does not wait
 * for a repeat: the waiting-runs probe redelivers claims older than a minute by itself
 * (redeliver-decisions.ts); both are safe together, a second delivery finds the token spent.
 * Measured with the dependencies' clock, which tests move forward.
 */
export const UNDELIVERED_CLAIM_RETRY_MS = 30_000;

/**
 * An approver's decision on a waiting turn (docs/approvers.md). Order matters:
 * 1. seeing the card needs `agent_approve`; the digest must name the turn that was reviewed;
 * 2. approving also passes the decision gate (tool-level authority, four-eyes, and with the
 *    `record` gate each write call's record check) under the card's policy raised to the floor;
 *    approving needs at least one call that would run (a card whose every call is unusable can
 *    only be rejected); with k-of-n (K > 1) each approval is claimed and tallied, and only the
 *    K-th goes on, once every approval it counts still qualifies under its approver's current
 *    record (one that no longer does lapses, and the turn waits);
 * 3. the decision is claimed atomically and recorded for audit BEFORE the task token is used,
 *    so a double submission never resumes twice and an unrecorded approval never executes.
 *
 * Every channel decides here (`options.channel`, recorded in the audit; the API's by default):
 * a Slack button passes the same digest, gates, routing, k-of-n and claim as the API.
 *
 * A transient fault answers `unavailable` (503) saying whether the decision is on record
 * (`decisionOnRecord`: `yes`, `no` or `unknown`); one on record is delivered by the system
 * itself (the probe), so the approver need not come back.
 */
export async function decideRun(
  dependencies: DecisionDependencies,
  principal: UserProfile,
  runId: string,
  request: DecisionRequest,
  options: { readonly channel?: DecisionChannel } = {},
): Promise<DecisionOutcome> {
  const progress: DecisionProgress = { onRecord: 'no' };
  try {
    return await decideOnce(dependencies, principal, runId, request, {
      progress,
      channel: options.channel ?? 'api',
    });
  } catch (error) {
    if (!isCountersignError(error, 'unavailable')) throw error;
    throw new CountersignError('unavailable', TEXTS.decisionUnavailable(progress.onRecord), {
      cause: error,
      details: { decisionOnRecord: progress.onRecord },
    });
  }
}

/** How far a decision got, for the answer to a transient fault: is it on record? */
interface DecisionProgress {
  onRecord: 'yes' | 'no' | 'unknown';
}

async function decideOnce(
  dependencies: DecisionDependencies,
  principal: UserProfile,
  runId: string,
  request: DecisionRequest,
  { progress, channel }: { progress: DecisionProgress; channel: DecisionChannel },
): Promise<DecisionOutcome> {
  requireGrant(principal, 'agent_approve');
  const delegator = await readDelegator(dependencies, principal, request.actingFor);
  const card = await readCard(dependencies, runId);
  // A card routed to groups the approver (or whom they act for) is not in is, for them, a card that does not exist.
  const reaches = (stored: StoredCard) =>
    delegator ? reachesThroughGroups(stored, delegator) : isCardRoutedTo(stored, principal);
  if (!card || !reaches(card)) throw new CountersignError('not-found', TEXTS.runNotFound);

  // A decision must name the turn that was reviewed: without a digest nobody reviewed anything.
  if (!request.digest)
    throw new CountersignError('stale-digest', TEXTS.staleDigest, { field: 'body.digest' });
  if (!isCardUndecided(card)) return answerClosedCard(dependencies, { principal, delegator }, card, request);
  const now = dependencies.clock.now();
  if (now.getTime() >= Date.parse(card.expiresAt)) {
    // The wait's own timeout ends the run too; expiring it here as well means the run shows
    // `expired` the moment a decision is refused for it (MarkExpired is idempotent).
    await markRunExpired(dependencies, { runId });
    throw new CountersignError('gone', TEXTS.decisionExpired);
  }
  if (request.digest !== card.digest) {
    dependencies.metrics.count('StaleDigestRefusals');
    throw new CountersignError('stale-digest', TEXTS.staleDigest, { field: 'body.digest' });
  }
  const policy = effectiveTurnPolicy(card, dependencies.settings.policyFloor);
  // Unsealed at most once per request, and only when something reads the sealed card.
  const unsealOnce = memoize(() => unsealShownCard(dependencies, card));
  const shaped = await shapeOnCard(dependencies, request, card, unsealOnce);
  const approvedIndexes = approvedIndexesOf(shaped);
  if (shaped.decision !== 'reject') {
    // An edit shapes writes: its editor holds the authority approving them needs.
    await assertDecisionGate(
      dependencies,
      { principal, delegator },
      card,
      policy,
      unsealOnce,
      approvedIndexes,
    );
  }
  if (shaped.decision === 'approve') {
    // A card (or the calls approved of it) on which nothing would run can only be rejected (issue #9).
    const calls = (await unsealOnce()).calls.filter(({ call }) => approvedIndexes?.has(call.index) ?? true);
    if (isNothingRunnable(calls)) throw new CountersignError('forbidden', TEXTS.nothingToApprove);
  }

  let approved: { approvedBy: string[]; delegatedApprovals: DelegatedApproval[] } | undefined;
  if (shaped.decision === 'approve' && policy.requiredApprovals > 1) {
    const approvalCalls = async () => (await unsealOnce()).calls;
    const tally = await tallyApproval(dependencies, {
      principal,
      ...(delegator ? { actingFor: delegator.userId } : {}),
      ...(shaped.choices ? { choices: shaped.choices } : {}),
      card,
      policy,
      now,
      approvalCalls,
      channel,
    });
    if (tally.kind === 'card-moved')
      return answerMovedCard(dependencies, { principal, delegator }, card, request);
    if (tally.kind === 'own-approval-differs')
      throw new CountersignError('conflict', TEXTS.ownApprovalDiffers);
    if (tally.kind === 'waiting') {
      const { approvals, message } = tally;
      return { kind: 'approval-recorded', runId, turn: card.turn, approvals, message };
    }
    approved = { approvedBy: tally.approvedBy, delegatedApprovals: tally.delegatedApprovals };
  }

  const record: DecisionClaim = {
    schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
    // Names this request as the claim's writer: an SDK retry that meets the claim knows it.
    claimId: dependencies.newId(),
    runId,
    turn: card.turn,
    decision: shaped.decision,
    digest: card.digest,
    decidedBy: principal.userId,
    decidedAt: now.toISOString(),
    ...(request.reason ? { reason: request.reason } : {}),
    cardShown: serializeCardShown((await unsealOnce()).card),
    ...(delegator ? { actingFor: delegator.userId } : {}),
    ...(approved ? { approvedBy: approved.approvedBy } : {}),
    ...(approved && approved.delegatedApprovals.length > 0
      ? { delegatedApprovals: approved.delegatedApprovals }
      : {}),
    ...(shaped.decision !== 'edit' && shaped.choices ? { choices: shaped.choices } : {}),
    ...(shaped.decision === 'edit' ? { edits: serializeEdits(shaped.edits) } : {}),
    channel,
  };
  // Unsealed before the claim: a token that cannot be used must not leave a claim behind.
  const taskToken = await unsealTaskToken(dependencies, card);
  const claim = await claimDecision(dependencies, record, progress);
  if (claim.kind === 'already-decided' && claim.existing.claimId !== record.claimId)
    return answerExistingClaim(dependencies, { principal, delegator }, card, claim.existing, request);
  // Claimed by this request (an SDK retry of the claim may have met its own first write).
  progress.onRecord = 'yes';
  await deliver(dependencies, card, record, taskToken);
  dependencies.metrics.count('Decisions', 1, { outcome: shaped.decision });
  dependencies.metrics.observe('PauseToDecision', now.getTime() - Date.parse(card.pausedAt), 'Milliseconds');
  dependencies.logger.info('decision recorded', {
    runId,
    turn: card.turn,
    decision: shaped.decision,
    channel,
    ...(delegator ? { actingFor: delegator.userId } : {}),
    ...(record.choices ? { refusedCalls: record.choices.filter((c) => c.decision === 'reject').length } : {}),
  });
  return decidedOutcome(record, false);
}

/** The decision on record as the answer says it: per-call choices when it made some. */
function decidedOutcome(record: DecisionRecord, repeated: boolean): DecisionOutcome {
  return {
    kind: 'decided',
    runId: record.runId,
    turn: record.turn,
    decision: record.decision === 'cancel' ? 'reject' : record.decision,
    ...(record.choices ? { choices: record.choices } : {}),
    repeated,
  };
}

/** The card moved on while an approval was being recorded: answer from where it is now. */
async function answerMovedCard(
  dependencies: DecisionDependencies,
  decider: Decider,
  card: StoredCard,
  request: DecisionRequest,
): Promise<DecisionOutcome> {
  const current = await dependencies.runs.getCard(card.runId);
  if (current && !isCardUndecided(current) && current.turn === card.turn)
    return answerClosedCard(dependencies, decider, current, request);
  throw new CountersignError('stale-digest', TEXTS.staleDigest, { field: 'body.digest' });
}

function memoize<Value>(compute: () => Promise<Value>): () => Promise<Value> {
  let value: Promise<Value> | undefined;
  return () => {
    value ??= compute();
    return value;
  };
}

async function answerClosedCard(
  dependencies: DecisionDependencies,
  decider: Decider,
  card: StoredCard,
  request: DecisionRequest,
): Promise<DecisionOutcome> {
  const existing = await dependencies.runs.getDecision(card.runId, card.turn);
  if (existing) return answerExistingClaim(dependencies, decider, card, existing, request);
  // The card closed without a decision: the run ended (cancelled while running, expired or
  // failed). The card says why; one closed before it did, the run record.
  const ended = card.closedBecause ?? (await dependencies.runs.getRunRecord(card.runId))?.status;
  if (ended === 'cancelled') throw new CountersignError('conflict', TEXTS.runCancelled);
  throw new CountersignError('gone', ended === 'failed' ? TEXTS.decisionRunFailed : TEXTS.decisionExpired);
}

/**
 * The same decision repeated gets the same answer; a different one (another decision, other
 * per-call choices, other edits, another digest) is a conflict.
 */
async function answerExistingClaim(
  dependencies: DecisionDependencies,
  decider: Decider,
  card: StoredCard,
  existing: DecisionRecord,
  request: DecisionRequest,
): Promise<DecisionOutcome> {
  if (existing.decision === 'cancel') throw new CountersignError('conflict', TEXTS.runCancelled);
  if (
    existing.digest !== request.digest ||
    contentOfRecord(existing) !== contentOfRequest(request, existing)
  ) {
    throw new CountersignError('conflict', TEXTS.alreadyDecided);
  }
  // A repeated approval passes the gate like a first one: it may deliver the token (below), and
  // someone the gate refuses must not be told their approval stands.
  if (existing.decision !== 'reject') {
    const approvedIndexes =
      existing.decision === 'edit'
        ? new Set(readEditsOnRecord(existing).map((edit) => edit.index))
        : existing.choices
          ? new Set(existing.choices.filter((c) => c.decision === 'approve').map((c) => c.index))
          : undefined;
    await assertDecisionGate(
      dependencies,
      decider,
      card,
      effectiveTurnPolicy(card, dependencies.settings.policyFloor),
      memoize(() => unsealShownCard(dependencies, card)),
      approvedIndexes,
    );
  }
  const claimAge = dependencies.clock.now().getTime() - Date.parse(existing.decidedAt);
  if (isCardUndecided(card) && claimAge >= UNDELIVERED_CLAIM_RETRY_MS) {
    // The first request claimed but never delivered (it crashed in between): deliver now.
    await deliver(dependencies, card, existing);
  }
  return decidedOutcome(existing, true);
}

async function unsealTaskToken(dependencies: DecisionDependencies, card: StoredCard): Promise<string> {
  const unsealed = await unsealCardToken(dependencies, card);
  if (unsealed.kind === 'unopenable') return refuseUnopenable();
  return unsealed.taskToken;
}

/** The stored card; one whose item does not even parse cannot be unsealed (its run ended by the reader). */
async function readCard(dependencies: DecisionDependencies, runId: string): Promise<StoredCard | undefined> {
  const read = await readStoredCard(dependencies, runId);
  if (read.kind === 'unopenable') return refuseUnopenable();
  return read.kind === 'stored' ? read.stored : undefined;
}

/** The sealed card the approver was shown, or a 410 when it cannot be unsealed. */
async function unsealShownCard(dependencies: DecisionDependencies, card: StoredCard): Promise<UnsealedCard> {
  const unsealed = await unsealCard(dependencies, card);
  if (unsealed.kind === 'unsealed') return unsealed;
  return refuseUnopenable();
}

/**
 * A card that cannot be unsealed can never be decided: the reader has ended the run (its execution
 * stopped without its token), and the approver is told so, as a 4xx: nothing they sent was
 * wrong, and nothing will happen.
 */
function refuseUnopenable(): never {
  throw new CountersignError('gone', TEXTS.cardUnopenable);
}

/**
 * The claim, read back when its write met a transient fault: the write may have applied before
 * the fault (then it is this request's, by its claim id), or not (then nothing is on record).
 */
async function claimDecision(
  dependencies: DecisionDependencies,
  record: DecisionClaim,
  progress: DecisionProgress,
): Promise<ClaimOutcome> {
  try {
    return await dependencies.runs.claimDecision(record);
  } catch (error) {
    if (!isCountersignError(error, 'unavailable')) throw error;
    progress.onRecord = 'unknown';
    const existing = await dependencies.runs.getDecision(record.runId, record.turn);
    progress.onRecord = existing === undefined ? 'no' : 'yes';
    if (existing === undefined) throw error;
    return { kind: 'already-decided', existing };
  }
}

/** Delivers the claimed decision to the card's wait (deliver-decision.ts); a 410 if it timed out. */
async function deliver(
  dependencies: DecisionDependencies,
  card: StoredCard,
  record: DecisionRecord,
  taskToken?: string,
): Promise<void> {
  let first = taskToken;
  const outcome = await deliverDecision(dependencies, card, record, async (current) => {
    const token = first ?? (await unsealTaskToken(dependencies, current));
    first = undefined;
    return token;
  });
  if (outcome.kind === 'expired') throw new CountersignError('gone', TEXTS.decisionExpired);
}
