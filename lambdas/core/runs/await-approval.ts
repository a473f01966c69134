import {
  APPROVAL_CARD_SCHEMA_VERSION,
  type ApprovalCard,
  parseApprovalCard,
} from '../approvals/approval-card.js';
import { captureCardContext } from '../approvals/card-context.js';
import { groupCallsDecidedTogether } from '../approvals/decision-groups.js';
import type { Decision, DecisionRecord } from '../approvals/decision-record.js';
import { escalationTimersOf, planCardEscalation } from '../approvals/escalation-ladder.js';
import { classifyCall, needsHumanApproval } from '../approvals/needs-human-approval.js';
import { resolveCalls } from '../approvals/resolve-calls.js';
import {
  isCardUndecided,
  isNotificationPending,
  STORED_CARD_SCHEMA_VERSION,
  type StoredCard,
} from '../approvals/stored-card.js';
import { computeTurnDigest } from '../approvals/turn-digest.js';
import { CountersignError, isCountersignError } from '../errors.js';
import { withCallerPreviews } from '../external-runs/caller-previews.js';
import { externalRunTools } from '../external-runs/external-tools.js';
import type { UserProfile } from '../identity.js';
import { applyPolicyFloor } from '../policy/policy-floor.js';
import type { StoredRun } from '../ports.js';
import { capturePreviews } from '../previews/capture-previews.js';
import { lacksDecisionEntry } from '../receipts/append-chain-entry.js';
import type { ReceiptDependencies } from '../receipts/receipt-recording.js';
import type { RunDependencies, ToolStepDependencies } from '../run-dependencies.js';
import { sealJson, unsealJson } from '../sealed-json.js';
import { TEXTS } from '../texts.js';
import { toolsForPendingCalls } from '../tools/mcp/run-tools.js';
import { finishClaimedCancel } from './cancel-run.js';
import { loadRun, unsealRunState } from './load-run.js';
import { capturePreconditions } from './record-preconditions.js';
import type { RunState } from './run-state.js';

export interface AwaitApprovalInput {
  runId: string;
  turn: number;
  /** The Step Functions task token: a bearer secret, sealed at once and never logged. */
  taskToken: string;
}

export type AwaitApprovalDependencies = ToolStepDependencies &
  Pick<RunDependencies, 'notifier' | 'settings' | 'escalations'> & {
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
 * The approval scan: build the suspended state of the turn (pending calls, previews, turn
 * digest), seal it with the task token, and put the run in the inbox. The card is sealed apart
 * from the transcript so the inbox never decrypts a transcript.
 *
 * Idempotent end to end: a retried or re-driven wait for a turn that already has its open card
 * only seals the new token into it (conditionally, so a card closed meanwhile stays closed), so
 * the previews and the digest stay those the approver may already be deciding on; a turn whose
 * decision is on record is never reopened but carried on, once its receipt entry is on the chain
 * (else the wait is re-entered for the approver's repeat, which appends it and delivers); and
 * `Run Awaiting Approval` goes out
 * once per pause: the card is written with its outbox `pending`, marked `sent` after the event.
 */
export async function awaitApproval(
  stepDependencies: AwaitApprovalDependencies,
  input: AwaitApprovalInput,
): Promise<AwaitApprovalOutcome> {
  let dependencies = stepDependencies;
  const { run, readOwner, card: existing, decision } = await readPause(dependencies, input);
  const { record } = run;
  if (record.turn !== input.turn || (record.status !== 'running' && record.status !== 'waiting')) {
    throw new CountersignError(
      'conflict',
      `The run is ${record.status} at turn ${record.turn}, not waiting at ${input.turn}.`,
    );
  }
  const waitsForEntry =
    decision !== undefined && (await lacksDecisionEntry(dependencies.receipts.chain, decision));
  if (decision && !waitsForEntry) return carryOnDecision(dependencies, decision);
  const waitId = dependencies.newId();
  const sealTaskToken = () =>
    sealJson(dependencies.sealer, 'task-token', input.runId, { taskToken: input.taskToken });
  if (existing && existing.turn === input.turn && isCardUndecided(existing)) {
    if (waitsForEntry) {
      dependencies.logger.warn('decision on record without its receipt entry: waiting for its repeat', {
        runId: input.runId,
        turn: input.turn,
      });
    }
    return reenterWait(dependencies, input, run, existing, { waitId, sealedToken: await sealTaskToken() });
  }
  // Decided without an entry (this step may not sign), its card no longer undecided: nothing to carry on or reopen.
  if (waitsForEntry) throw new CountersignError('conflict', TEXTS.decisionWithoutReceipt);

  // Unseal before sealing anything: a cold container then unwraps the state's sealing key (one
  // KMS call) and seals the token and the card with it, instead of first generating a new key.
  const state = await unsealRunState(dependencies, run);
  const sealedToken = await sealTaskToken();
  // The run's MCP tools (their previews and effects) as their servers list them now; an external
  // run's tools as their caller declared them.
  const runTools = state.external
    ? externalRunTools(state.pendingCalls, dependencies.tools)
    : await toolsForPendingCalls(dependencies, state.pendingCalls, record.configurationId);
  dependencies = { ...dependencies, tools: runTools.tools };
  // Fails closed: a call whose tool's effect cannot be established now, or that claims to be less
  // guarded than the model turn found it, is unconfirmed and guarded like a write.
  const classified = state.pendingCalls.map((call) => ({
    ...call,
    guard: classifyCall(call, runTools.confirmedTool(call.tool)),
  }));
  // Each call's tool and arguments, parsed once for the preconditions and the previews.
  const resolved = resolveCalls(classified, dependencies.tools);
  const needsPreview = resolved.some(
    ({ call, tool }) => call.offered && (tool?.preview !== undefined || tool?.readPrecondition !== undefined),
  );
  // Seed 000: a preview never shows what the write could not do, so it is produced under the
  // owner's rights as they are NOW (not as snapshotted at start). An owner who no longer exists
  // previews with no rights at all: the tool then gives the neutral refusal the write would.
  const actingUser = needsPreview ? ((await readOwner()) ?? withoutRights(record.owner)) : undefined;
  const context = actingUser && { actingUser, runId: input.runId, pages: dependencies.pages };
  // A relative write's target version, read before its preview and sealed with the card and the
  // state: the digest covers it, so an approval binds the record as it was shown.
  const guarded = context
    ? await capturePreconditions(resolved, {
        actingUser: context.actingUser,
        context,
        logger: dependencies.logger,
      })
    : resolved;
  const calls = guarded.map(({ call }) => call);
  const hasPreconditions = calls.some((call) => call.precondition !== undefined);
  const digest = computeTurnDigest(input.runId, input.turn, calls);
  const captured = context
    ? await capturePreviews({
        calls: guarded,
        actingUser: context.actingUser,
        context,
        logger: dependencies.logger,
      })
    : calls;
  // An external run's previews are its caller's lines, bounded and quoted when it submitted them.
  const previewed = state.external ? withCallerPreviews(captured, state.external.callerPreviews) : captured;
  const card: ApprovalCard = {
    schemaVersion: APPROVAL_CARD_SCHEMA_VERSION,
    runId: input.runId,
    turn: input.turn,
    digest,
    // The model's call id stays in the run state: nothing on a card reads it.
    pendingCalls: previewed.map(({ callId: _callId, ...call }) => call),
    // What a reviewer needs beside the calls, sealed with them (the inbox never reads a transcript).
    context: captureCardContext({
      request: state.request,
      transcript: state.transcript,
      ownerName: (actingUser ?? (await readOwner()))?.displayName,
    }),
  };
  const previews = card.pendingCalls.flatMap((call) => (call.preview ? [call.preview] : []));
  const now = dependencies.clock.now();
  const pausedAt = now.toISOString();
  const expiresAt = approvalDeadline(now, dependencies.settings.approvalTimeoutSeconds).toISOString();
  const toolNames = [...new Set(calls.map((call) => call.tool))];
  const escalation = planCardEscalation(record.policy.escalation, now, new Date(expiresAt));
  // Every tool a guarded call names, unconfirmed ones included: each gate covers them as writes.
  const writeToolNames = [
    ...new Set(calls.filter((call) => needsHumanApproval(call.guard)).map((call) => call.tool)),
  ];
  // The run's policy raised to the floor as it is now, with this turn's write tools (a tool the
  // floor names forces four-eyes); the decision raises it to the floor once more.
  const policy = applyPolicyFloor(record.policy, dependencies.settings.policyFloor, writeToolNames);
  // Calls whose tools declare they are decided together, as the tools are now (the card keeps it).
  const decisionGroups = groupCallsDecidedTogether(
    calls,
    (tool) => dependencies.tools.get(tool)?.decidedWith,
  );
  // An approver's edit makes the card their proposal: the gate keeps them from approving it.
  const editedBy = calls.find((call) => call.edited !== undefined)?.edited?.by;
  const storedCard: StoredCard = {
    schemaVersion: STORED_CARD_SCHEMA_VERSION,
    runId: input.runId,
    owner: record.owner,
    label: record.label,
    configurationId: record.configurationId,
    turn: input.turn,
    digest,
    pausedAt,
    expiresAt,
    toolNames,
    writeToolNames,
    callGuards: calls.map(({ index, tool, guard }) => ({ index, tool, guard })),
    fourEyes: policy.fourEyes,
    requiredApprovals: policy.requiredApprovals,
    decisionGate: policy.decisionGate,
    revealRejectionReason: record.policy.revealRejectionReason,
    ...(record.policy.approverGroups === undefined ? {} : { approverGroups: record.policy.approverGroups }),
    ...(escalation === undefined ? {} : { escalation }),
    ...(editedBy === undefined ? {} : { editedBy }),
    ...(decisionGroups.length > 0 ? { decisionGroups } : {}),
    state: 'open',
    sealedCard: await sealJson(dependencies.sealer, 'approval-card', input.runId, card),
    sealedToken,
    waitId,
    notification: 'pending',
  };
  // Never over a card of this turn that closed meanwhile (decided, or its run ended).
  const put = await dependencies.runs.putCard(storedCard, { unlessClosedAtItsTurn: true });
  if (put.kind === 'condition-failed') return afterCardClosed(dependencies, input);
  await markWaiting(
    dependencies,
    input,
    { pausedAt, expiresAt, toolNames },
    // Execution compares against the state's versions: they are sealed with the card's digest.
    hasPreconditions ? { ...state, pendingCalls: calls } : undefined,
  );
  dependencies.metrics.count('RunsSuspended');
  // Captured beside failed, so the failure rate has its denominator.
  dependencies.metrics.count('PreviewsCaptured', previews.length);
  dependencies.metrics.count('PreviewsFailed', previews.filter((preview) => preview.failed).length);
  dependencies.logger.info('run awaiting approval', {
    runId: input.runId,
    turn: input.turn,
    tools: toolNames,
  });
  return announceWaitingCard(dependencies, storedCard);
}

/**
 * A retried or re-driven wait at a turn whose card is open: the new token goes into that card,
 * only while it stays open at its digest. A first attempt that failed before the run was marked
 * waiting is finished from the card (its preconditions restore the state's), and an event that
 * never went out goes out now.
 */
async function reenterWait(
  dependencies: AwaitApprovalDependencies,
  input: AwaitApprovalInput,
  run: StoredRun,
  card: StoredCard,
  wait: { waitId: string; sealedToken: Uint8Array },
): Promise<AwaitApprovalOutcome> {
  const renewed = await dependencies.runs.renewCardToken(input.runId, {
    turn: input.turn,
    digest: card.digest,
    ...wait,
  });
  if (renewed.kind === 'condition-failed') return afterCardClosed(dependencies, input);
  if (run.record.status === 'running') {
    const state = await unsealRunState(dependencies, run);
    const sealed = parseApprovalCard(
      await unsealJson(dependencies.sealer, 'approval-card', input.runId, card.sealedCard),
    );
    const versions = new Map(sealed.pendingCalls.map((call) => [call.index, call.precondition]));
    const calls: RunState['pendingCalls'] = state.pendingCalls.map(({ precondition: _unsealed, ...call }) => {
      const version = versions.get(call.index);
      return version === undefined ? call : { ...call, precondition: version };
    });
    const hasPreconditions = calls.some((call) => call.precondition !== undefined);
    await markWaiting(
      dependencies,
      input,
      card,
      hasPreconditions ? { ...state, pendingCalls: calls } : undefined,
    );
  }
  dependencies.logger.info('approval wait re-entered', { runId: input.runId, turn: input.turn });
  // A re-entered wait re-arms the steps not yet announced (a restarted local process lost its timers).
  return announceWaitingCard(dependencies, card);
}

/** The run waits (and, with preconditions, its state holds the versions the card sealed). */
async function markWaiting(
  dependencies: AwaitApprovalDependencies,
  input: AwaitApprovalInput,
  pause: Pick<StoredCard, 'pausedAt' | 'expiresAt' | 'toolNames'>,
  state: RunState | undefined,
): Promise<void> {
  const outcome = await dependencies.runs.updateRun(
    input.runId,
    {
      status: 'waiting',
      pausedAt: pause.pausedAt,
      expiresAt: pause.expiresAt,
      pendingToolNames: pause.toolNames,
      updatedAt: pause.pausedAt,
    },
    {
      expectStatus: ['running', 'waiting'],
      ...(state ? { sealedState: await sealJson(dependencies.sealer, 'run-state', input.runId, state) } : {}),
    },
  );
  if (outcome.kind === 'condition-failed') {
    // Cancelled (or ended) while this step ran: the card just put must not stay in the inbox.
    await dependencies.runs.closeCard(input.runId, 'ended');
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
  input: AwaitApprovalInput,
): Promise<AwaitApprovalOutcome> {
  const decision = await dependencies.runs.getDecision(input.runId, input.turn);
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
 * see both); the owner's current record is read only when a preview needs their rights. One
 * round trip more than a batched read with the owner named by the step input would take: the
 * bench measured it as not worth a port method, an adapter and a field in the state machine.
 */
async function readPause(
  dependencies: AwaitApprovalDependencies,
  input: AwaitApprovalInput,
): Promise<{
  run: StoredRun;
  readOwner: () => Promise<UserProfile | undefined>;
  card?: StoredCard;
  decision?: DecisionRecord;
}> {
  const [run, card, decision] = await Promise.all([
    loadRun(dependencies, input.runId),
    // A card that does not parse is no card to the pause: it puts a fresh one.
    dependencies.runs.getCard(input.runId).catch((error: unknown) => {
      if (isCountersignError(error, 'sealed-state-rejected')) return undefined;
      throw error;
    }),
    dependencies.runs.getDecision(input.runId, input.turn),
  ]);
  return {
    run,
    readOwner: () => dependencies.users.getUser(run.record.owner),
    ...(card ? { card } : {}),
    ...(decision ? { decision } : {}),
  };
}

/** A user who may do nothing: how a deleted owner is previewed. */
function withoutRights(userId: string): UserProfile {
  return { userId, displayName: '', grants: [], pageAccess: [], languageAccess: [], toolAccess: [] };
}

/**
 * When the card stops taking decisions. The wait's own timer started when Step Functions
 * entered AwaitApproval, before this step ran; the card closes a margin earlier (5 % of the
 * window, at most 5 minutes, well over this step's longest run) so that no decision is
 * accepted after the execution has already timed out. A late decision expires the run itself.
 */
export function approvalDeadline(pausedAt: Date, approvalTimeoutSeconds: number): Date {
  const windowMs = approvalTimeoutSeconds * 1000;
  const marginMs = Math.min(300_000, Math.floor(windowMs / 20));
  return new Date(pausedAt.getTime() + windowMs - marginMs);
}
