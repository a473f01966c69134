import { APPROVAL_CARD_SCHEMA_VERSION, type ApprovalCard } from '../approvals/approval-card.js';
import { escalationTimersOf, planCardEscalation } from '../approvals/escalation-ladder.js';
import { classifyCall, needsHumanApproval } from '../approvals/needs-human-approval.js';
import { resolveCalls } from '../approvals/resolve-calls.js';
import { STORED_CARD_SCHEMA_VERSION, type StoredCard } from '../approvals/stored-card.js';
import { computeTurnDigest } from '../approvals/turn-digest.js';
import { CountersignError } from '../errors.js';
import type { UserProfile } from '../identity.js';
import { applyPolicyFloor } from '../policy/policy-floor.js';
import type { StoredRun } from '../ports.js';
import { capturePreviews } from '../previews/capture-previews.js';
import { TEXTS } from '../texts.js';
import { toolsForPendingCalls } from '../tools/mcp/run-tools.js';
import { loadRun, reportingRefusal, unsealRunState } from './load-run.js';
import { capturePreconditions } from './record-preconditions.js';
import type { RunDependencies, ToolStepDependencies } from './run-dependencies.js';
import { sealJson } from './sealed-json.js';

export interface AwaitApprovalInput {
  runId: string;
  turn: number;
  /** The Step Functions task token: a bearer secret, sealed at once and never logged. */
  taskToken: string;
  /**
   * The run's owner as the step input names them, so that the run and the owner's current
   * record are read in one round trip. Only a hint: the run record says who the owner is.
   * Absent (an execution from before the owner rode along): two reads.
   */
  owner?: string;
}

type AwaitDependencies = ToolStepDependencies &
  Pick<RunDependencies, 'notifier' | 'settings' | 'escalations'>;

/**
 * The approval scan: build the suspended state of the turn (pending calls, previews, turn
 * digest), seal it with the task token, and put the run in the inbox. The card is sealed apart
 * from the transcript so the inbox never decrypts a transcript.
 *
 * Idempotent: a retried or re-driven wait for a turn that already has its card only re-seals
 * the new token, so the previews stay those captured when the run first paused.
 */
export async function awaitApproval(
  stepDependencies: AwaitDependencies,
  input: AwaitApprovalInput,
): Promise<void> {
  let dependencies = stepDependencies;
  const { run, readOwner } = await readRunAndOwner(dependencies, input);
  const { record } = run;
  if (record.turn !== input.turn || (record.status !== 'running' && record.status !== 'waiting')) {
    throw new CountersignError(
      'conflict',
      `The run is ${record.status} at turn ${record.turn}, not waiting at ${input.turn}.`,
    );
  }
  const sealTaskToken = () =>
    sealJson(dependencies.sealer, 'task-token', input.runId, { taskToken: input.taskToken });
  if (record.status === 'waiting') {
    const existing = await dependencies.runs.getCard(input.runId);
    if (existing && existing.turn === input.turn) {
      const { closedBecause: _closed, ...card } = existing;
      await dependencies.runs.putCard({ ...card, state: 'open', sealedToken: await sealTaskToken() });
      dependencies.logger.info('approval wait re-entered', { runId: input.runId, turn: input.turn });
      // A re-entered wait re-arms the steps not yet announced (a restarted local process lost its timers).
      await dependencies.escalations.arm(escalationTimersOf(existing));
      return;
    }
  }

  // Unseal before sealing anything: a cold container then unwraps the state's sealing key (one
  // KMS call) and seals the token and the card with it, instead of first generating a new key.
  const state = await unsealRunState(dependencies, run);
  const sealedToken = await sealTaskToken();
  // The run's MCP tools (their previews and effects) as their servers list them now.
  const runTools = await toolsForPendingCalls(dependencies, state.pendingCalls, record.configurationId);
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
  const previewed = context
    ? await capturePreviews({
        calls: guarded,
        actingUser: context.actingUser,
        context,
        logger: dependencies.logger,
      })
    : calls;
  const card: ApprovalCard = {
    schemaVersion: APPROVAL_CARD_SCHEMA_VERSION,
    runId: input.runId,
    turn: input.turn,
    digest,
    // The model's call id stays in the run state: nothing on a card reads it.
    pendingCalls: previewed.map(({ callId: _callId, ...call }) => call),
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
    state: 'open',
    sealedCard: await sealJson(dependencies.sealer, 'approval-card', input.runId, card),
    sealedToken,
  };
  await dependencies.runs.putCard(storedCard);
  const outcome = await dependencies.runs.updateRun(
    input.runId,
    { status: 'waiting', pausedAt, expiresAt, pendingToolNames: toolNames, updatedAt: pausedAt },
    {
      expectStatus: ['running', 'waiting'],
      // Execution compares against the state's versions: they are sealed with the card's digest.
      ...(hasPreconditions
        ? {
            sealedState: await sealJson(dependencies.sealer, 'run-state', input.runId, {
              ...state,
              pendingCalls: calls,
            }),
          }
        : {}),
    },
  );
  if (outcome.kind === 'condition-failed') {
    // Cancelled (or ended) while this step ran: the card just put must not stay in the inbox.
    await dependencies.runs.closeCard(input.runId, 'ended');
    throw new CountersignError('conflict', 'The run ended while it was pausing.');
  }
  dependencies.metrics.count('RunsSuspended');
  // Captured beside failed, so the failure rate has its denominator.
  dependencies.metrics.count('PreviewsCaptured', previews.length);
  dependencies.metrics.count('PreviewsFailed', previews.filter((preview) => preview.failed).length);
  dependencies.logger.info('run awaiting approval', {
    runId: input.runId,
    turn: input.turn,
    tools: toolNames,
  });
  await dependencies.notifier.runAwaitingApproval({
    runId: input.runId,
    toolNames,
    pausedAt,
    approverGroups: record.policy.approverGroups ?? [],
    reason: 'paused',
  });
  // Armed once the card is up and announced: a step fires only for a card that waits.
  await dependencies.escalations.arm(escalationTimersOf(storedCard));
}

/**
 * The run and, when the step input names the owner, the owner's record in the same read (one
 * BatchGetItem, where the repository offers it); the owner is otherwise read only when a
 * preview needs them.
 */
async function readRunAndOwner(
  dependencies: AwaitDependencies,
  input: AwaitApprovalInput,
): Promise<{ run: StoredRun; readOwner: () => Promise<UserProfile | undefined> }> {
  const owner = input.owner;
  const getRunAndUser = dependencies.runs.getRunAndUser?.bind(dependencies.runs);
  if (owner === undefined || getRunAndUser === undefined) {
    const run = await loadRun(dependencies, input.runId);
    return { run, readOwner: () => dependencies.users.getUser(run.record.owner) };
  }
  const { run, user } = await reportingRefusal(dependencies, input.runId, () =>
    getRunAndUser(input.runId, owner),
  );
  if (!run) throw new CountersignError('not-found', TEXTS.runNotFound);
  if (run.record.owner === owner) return { run, readOwner: async () => user };
  // The input named someone else: the record decides whose rights the previews use.
  return { run, readOwner: () => dependencies.users.getUser(run.record.owner) };
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
