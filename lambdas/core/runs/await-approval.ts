import type { Decision, DecisionRecord } from '../approvals/decision-record.js';
import { escalationTimersOf } from '../approvals/escalation-ladder.js';
import { isCardUndecided, isNotificationPending, type StoredCard } from '../approvals/stored-card.js';
import { CountersignError, isCountersignError } from '../errors.js';
import type { StoredRun } from '../ports.js';
import { lacksDecisionEntry } from '../receipts/append-chain-entry.js';
import type { ReceiptDependencies } from '../receipts/receipt-recording.js';
import type { RunDependencies } from '../run-dependencies.js';
import { sealJson } from '../sealed-json.js';
import { TEXTS } from '../texts.js';
import { finishClaimedCancel } from './cancel-run.js';
import { loadRun } from './load-run.js';
import { type FreshCard, type FreshCardDependencies, putFreshCard } from './put-fresh-card.js';
import { type RenewedCard, reenterWait } from './reenter-wait.js';
import type { RunState } from './run-state.js';

export interface AwaitApprovalInput {
  runId: string;
  turn: number;
  /** The Step Functions task token: a bearer secret, sealed at once and never logged. */
  taskToken: string;
}

export type AwaitApprovalDependencies = FreshCardDependencies &
  Pick<RunDependencies, 'notifier' | 'escalations'> & {
    /** The receipt chains: a decision on record is carried on only once its entry is there. */
    receipts: Pick<ReceiptDependencies, 'chain'>;
  };

/**
 * `waiting`: the card is in the inbox with this attempt's task token. `decided`: the turn's
 * decision was already on record (a pause retried or re-driven after an approver decided), so
 * the step carries it on instead of waiting for a delivery that was already made.
 */
export type AwaitApprovalOutcome = { kind: 'waiting' } | { kind: 'decided'; decision: Decision };

/**
 * The approval scan: read what the pause needs once, choose its branch, and put the run in the
 * inbox on a card that holds this attempt's task token.
 *
 * Idempotent end to end: a retried or re-driven wait for a turn that already has its open card
 * only seals the new token into it (conditionally, so a card closed meanwhile stays closed); a
 * turn whose decision is on record is never reopened but carried on, once its receipt entry is on
 * the chain (else the wait is re-entered for the approver's repeat, which appends it and
 * delivers); and `Run Awaiting Approval` goes out once per pause: the card is written with its
 * outbox `pending`, marked `sent` after the event.
 */
export async function awaitApproval(
  dependencies: AwaitApprovalDependencies,
  input: AwaitApprovalInput,
): Promise<AwaitApprovalOutcome> {
  const pause = await readPause(dependencies, input);
  const branch = await choosePauseBranch(dependencies, pause);
  if (branch.kind === 'conflict') throw new CountersignError('conflict', branch.message);
  if (branch.kind === 'carry-on') return carryOnDecision(dependencies, branch.decision);
  const up =
    branch.kind === 'reenter'
      ? await reenterWait(dependencies, pause.run, branch.card, input.taskToken)
      : await putFreshCard(dependencies, pause.run, input.taskToken);
  if (up.kind === 'card-closed') return afterCardClosed(dependencies, pause.run);
  if (up.runWaits) await markWaiting(dependencies, up.card, up.runWaits.state);
  reportWaitingCard(dependencies, up);
  // A re-entered wait re-arms the steps not yet announced (a restarted local process lost its timers).
  return announceWaitingCard(dependencies, up.card);
}

/** A card that holds this attempt's token, put fresh or renewed. */
type WaitingCard = Exclude<FreshCard | RenewedCard, { kind: 'card-closed' }>;

/** The pause as read once: the run at the turn asked, and its card and decision when they are on record. */
interface Pause {
  run: StoredRun;
  card?: StoredCard;
  decision?: DecisionRecord;
}

/** Where a pause goes: carry a decision on, re-enter the wait on its card, put a fresh card. */
type PauseBranch =
  | { kind: 'carry-on'; decision: DecisionRecord }
  | { kind: 'reenter'; card: StoredCard }
  | { kind: 'fresh' }
  | { kind: 'conflict'; message: string };

/**
 * A decision on record is carried on once its receipt entry is on the chain; without its entry
 * an undecided card of the turn waits for the approver's repeat, which appends it and delivers.
 */
async function choosePauseBranch(
  dependencies: AwaitApprovalDependencies,
  { run: { record }, card, decision }: Pause,
): Promise<PauseBranch> {
  const waitsForEntry =
    decision !== undefined && (await lacksDecisionEntry(dependencies.receipts.chain, decision));
  if (decision && !waitsForEntry) return { kind: 'carry-on', decision };
  if (card && card.turn === record.turn && isCardUndecided(card)) {
    if (waitsForEntry) {
      dependencies.logger.warn('decision on record without its receipt entry: waiting for its repeat', {
        runId: record.runId,
        turn: record.turn,
      });
    }
    return { kind: 'reenter', card };
  }
  // Decided without an entry (this step may not sign), its card no longer undecided: nothing to carry on or reopen.
  if (waitsForEntry) return { kind: 'conflict', message: TEXTS.decisionWithoutReceipt };
  return { kind: 'fresh' };
}

/** A fresh card counts its previews, captured beside failed so the failure rate has its denominator. */
function reportWaitingCard(dependencies: AwaitApprovalDependencies, up: WaitingCard): void {
  if (up.kind === 'renewed') {
    dependencies.logger.info('approval wait re-entered', { runId: up.card.runId, turn: up.card.turn });
    return;
  }
  dependencies.metrics.count('RunsSuspended');
  dependencies.metrics.count('PreviewsCaptured', up.previews.captured);
  dependencies.metrics.count('PreviewsFailed', up.previews.failed);
  dependencies.logger.info('run awaiting approval', {
    runId: up.card.runId,
    turn: up.card.turn,
    tools: up.card.toolNames,
  });
}

/** The run waits (and, with preconditions, its state holds the versions the card sealed). */
async function markWaiting(
  dependencies: AwaitApprovalDependencies,
  card: StoredCard,
  state: RunState | undefined,
): Promise<void> {
  const outcome = await dependencies.runs.updateRun(
    card.runId,
    {
      status: 'waiting',
      pausedAt: card.pausedAt,
      expiresAt: card.expiresAt,
      pendingToolNames: card.toolNames,
      updatedAt: card.pausedAt,
    },
    {
      expectStatus: ['running', 'waiting'],
      ...(state ? { sealedState: await sealJson(dependencies.sealer, 'run-state', card.runId, state) } : {}),
    },
  );
  if (outcome.kind === 'condition-failed') {
    // Cancelled (or ended) while this step ran: the card just put must not stay in the inbox.
    await dependencies.runs.closeCard(card.runId, 'ended');
    throw new CountersignError('conflict', 'The run ended while it was pausing.');
  }
}

/**
 * The card waits: `Run Awaiting Approval` goes out (once), then the escalation steps are armed,
 * so a step fires only for a card that is up and announced.
 */
async function announceWaitingCard(
  dependencies: AwaitApprovalDependencies,
  card: StoredCard,
): Promise<AwaitApprovalOutcome> {
  await sendNotification(dependencies, card);
  await dependencies.escalations.arm(escalationTimersOf(card));
  return { kind: 'waiting' };
}

/**
 * The card's outbox: `Run Awaiting Approval` once per pause, marked sent after it went out. A
 * mark that fails transiently is only logged: the event is out, and failing the step for it
 * would make its retry send it a second time.
 */
async function sendNotification(dependencies: AwaitApprovalDependencies, card: StoredCard): Promise<void> {
  if (!isNotificationPending(card)) return;
  await dependencies.notifier.runAwaitingApproval({
    runId: card.runId,
    toolNames: card.toolNames,
    pausedAt: card.pausedAt,
    approverGroups: card.approverGroups ?? [],
    reason: 'paused',
  });
  try {
    await dependencies.runs.markCardNotified(card.runId, card.turn);
  } catch (error) {
    if (!isCountersignError(error, 'unavailable')) throw error;
    dependencies.logger.warn('awaiting-approval event sent, outbox not marked', {
      runId: card.runId,
      turn: card.turn,
    });
  }
}

/**
 * The card of this turn closed while the pause was written: an approver decided (the decision
 * is carried on) or the run ended (nothing to wait for).
 */
async function afterCardClosed(
  dependencies: AwaitApprovalDependencies,
  { record }: StoredRun,
): Promise<AwaitApprovalOutcome> {
  const decision = await dependencies.runs.getDecision(record.runId, record.turn);
  if (!decision) throw new CountersignError('conflict', 'The run ended while it was pausing.');
  if (await lacksDecisionEntry(dependencies.receipts.chain, decision)) {
    throw new CountersignError('conflict', TEXTS.decisionWithoutReceipt);
  }
  return carryOnDecision(dependencies, decision);
}

/**
 * A decision of this turn is on record: its card closes (if it is still open) and the decision
 * counts as delivered, since this step carries it on itself. A cancel's claim is the cancel.
 */
async function carryOnDecision(
  dependencies: AwaitApprovalDependencies,
  decision: DecisionRecord,
): Promise<AwaitApprovalOutcome> {
  if (decision.decision === 'cancel') {
    await finishClaimedCancel(dependencies, decision);
    throw new CountersignError('conflict', 'The run was cancelled.');
  }
  await dependencies.runs.closeCard(decision.runId, 'decided');
  await dependencies.runs.markDecisionDelivered(decision.runId, decision.turn);
  dependencies.logger.info('approval wait not reopened: the turn is decided', {
    runId: decision.runId,
    turn: decision.turn,
    decision: decision.decision,
  });
  return { kind: 'decided', decision: decision.decision };
}

/**
 * The run, its card and the decision on record for the turn, read together (a retried pause must
 * see both); a run that is not running or waiting at that turn is a conflict. The owner is read only by a fresh card, whose previews need their rights: one round
 * trip more than a batched read with the owner named by the step input would take, which the
 * bench measured as not worth a port method, an adapter and a field in the state machine.
 */
async function readPause(dependencies: AwaitApprovalDependencies, input: AwaitApprovalInput): Promise<Pause> {
  const [run, card, decision] = await Promise.all([
    loadRun(dependencies, input.runId),
    // A card that does not parse is no card to the pause: it puts a fresh one.
    dependencies.runs.getCard(input.runId).catch((error: unknown) => {
      if (isCountersignError(error, 'sealed-state-rejected')) return undefined;
      throw error;
    }),
    dependencies.runs.getDecision(input.runId, input.turn),
  ]);
  const { record } = run;
  if (record.turn !== input.turn || (record.status !== 'running' && record.status !== 'waiting')) {
    throw new CountersignError(
      'conflict',
      `The run is ${record.status} at turn ${record.turn}, not waiting at ${input.turn}.`,
    );
  }
  return { run, ...(card ? { card } : {}), ...(decision ? { decision } : {}) };
}
