import { APPROVAL_CARD_SCHEMA_VERSION, type ApprovalCard } from '../approvals/approval-card.js';
import { captureCardContext } from '../approvals/card-context.js';
import { groupCallsDecidedTogether } from '../approvals/decision-groups.js';
import { planCardEscalation } from '../approvals/escalation-ladder.js';
import { type CallGuard, classifyCall, needsHumanApproval } from '../approvals/needs-human-approval.js';
import type { RunStateCall } from '../approvals/pending-call.js';
import { resolveCalls } from '../approvals/resolve-calls.js';
import { STORED_CARD_SCHEMA_VERSION, type StoredCard } from '../approvals/stored-card.js';
import { computeTurnDigest } from '../approvals/turn-digest.js';
import { withCallerPreviews } from '../external-runs/caller-previews.js';
import { externalRunTools } from '../external-runs/external-tools.js';
import type { UserProfile } from '../identity.js';
import { applyPolicyFloor } from '../policy/policy-floor.js';
import type { StoredRun } from '../ports.js';
import { capturePreviews } from '../previews/capture-previews.js';
import type { RunDependencies, ToolStepDependencies } from '../run-dependencies.js';
import { sealJson } from '../sealed-json.js';
import { toolsForPendingCalls } from '../tools/mcp/run-tools.js';
import type { ToolRegistry } from '../tools/tool.js';
import { unsealRunState } from './load-run.js';
import { capturePreconditions } from './record-preconditions.js';
import type { RunState } from './run-state.js';

/** What putting a fresh card needs: the tool step's ports and the deployment's settings. */
export type FreshCardDependencies = ToolStepDependencies & Pick<RunDependencies, 'settings'>;

/**
 * `put`: the card is stored with this attempt's token; the run is still to be marked waiting,
 * with the `state` to seal when the card sealed preconditions the execution compares against.
 * `card-closed`: a card of this turn closed while this one was built (decided, or its run ended).
 */
export type FreshCard =
  | {
      kind: 'put';
      card: StoredCard;
      runWaits: { state?: RunState };
      previews: { captured: number; failed: number };
    }
  | { kind: 'card-closed' };

/** A call of the turn with its guard as the tools are now. */
type ClassifiedCall = RunStateCall & { guard: CallGuard };

/** The turn's calls as the card seals them, with the digest that binds them. */
interface CapturedCalls {
  calls: ClassifiedCall[];
  previewed: ClassifiedCall[];
  digest: string;
  tools: ToolRegistry;
  ownerName: string | undefined;
}

/**
 * Builds the turn's card in one pass (resolve each call once, read its precondition, capture its
 * preview, digest, seal) and stores it with the sealed task token. The card is sealed apart from
 * the transcript so the inbox never decrypts a transcript.
 */
export async function putFreshCard(
  dependencies: FreshCardDependencies,
  run: StoredRun,
  taskToken: string,
): Promise<FreshCard> {
  const { record } = run;
  const waitId = dependencies.newId();
  // Unseal before sealing anything: a cold container then unwraps the state's sealing key (one
  // KMS call) and seals the token and the card with it, instead of first generating a new key.
  const state = await unsealRunState(dependencies, run);
  const sealedToken = await sealJson(dependencies.sealer, 'task-token', record.runId, { taskToken });
  const captured = await captureCalls(dependencies, run, state);
  const card: ApprovalCard = {
    schemaVersion: APPROVAL_CARD_SCHEMA_VERSION,
    runId: record.runId,
    turn: record.turn,
    digest: captured.digest,
    // The model's call id stays in the run state: nothing on a card reads it.
    pendingCalls: captured.previewed.map(({ callId: _callId, ...call }) => call),
    // What a reviewer needs beside the calls, sealed with them (the inbox never reads a transcript).
    context: captureCardContext({
      request: state.request,
      transcript: state.transcript,
      ownerName: captured.ownerName,
    }),
  };
  const stored: StoredCard = {
    ...draftStoredCard(dependencies, run, captured),
    state: 'open',
    sealedCard: await sealJson(dependencies.sealer, 'approval-card', record.runId, card),
    sealedToken,
    waitId,
    notification: 'pending',
  };
  // Never over a card of this turn that closed meanwhile (decided, or its run ended).
  const put = await dependencies.runs.putCard(stored, { unlessClosedAtItsTurn: true });
  if (put.kind === 'condition-failed') return { kind: 'card-closed' };
  const previews = card.pendingCalls.flatMap((call) => (call.preview ? [call.preview] : []));
  const hasPreconditions = captured.calls.some((call) => call.precondition !== undefined);
  return {
    kind: 'put',
    card: stored,
    // Execution compares against the state's versions: they are sealed with the card's digest.
    runWaits: hasPreconditions ? { state: { ...state, pendingCalls: captured.calls } } : {},
    previews: { captured: previews.length, failed: previews.filter((preview) => preview.failed).length },
  };
}

/**
 * Each call resolved once against the tools as they are now, then its precondition, the digest
 * and its preview, in that order: the version is read before the preview, and the digest covers it.
 */
async function captureCalls(
  dependencies: FreshCardDependencies,
  run: StoredRun,
  state: RunState,
): Promise<CapturedCalls> {
  const { record } = run;
  // The run's MCP tools (their previews and effects) as their servers list them now; an external
  // run's tools as their caller declared them.
  const runTools = state.external
    ? externalRunTools(state.pendingCalls, dependencies.tools)
    : await toolsForPendingCalls(dependencies, state.pendingCalls, record.configurationId);
  // Fails closed: a call whose tool's effect cannot be established now, or that claims to be less
  // guarded than the model turn found it, is unconfirmed and guarded like a write.
  const classified = state.pendingCalls.map((call) => ({
    ...call,
    guard: classifyCall(call, runTools.confirmedTool(call.tool)),
  }));
  const resolved = resolveCalls(classified, runTools.tools);
  const needsPreview = resolved.some(
    ({ call, tool }) => call.offered && (tool?.preview !== undefined || tool?.readPrecondition !== undefined),
  );
  // The owner is read once: their name goes on the card, their rights into the previews.
  const owner = await dependencies.users.getUser(record.owner);
  // A preview never shows what the write could not do (docs/previews.md), so it is produced
  // under the owner's rights as they are NOW (not as snapshotted at start). An owner who no
  // longer exists previews with no rights at all: the tool then gives the refusal the write would.
  const actingUser = needsPreview ? (owner ?? withoutRights(record.owner)) : undefined;
  const context = actingUser && { actingUser, runId: record.runId, pages: dependencies.pages };
  const request = context && { actingUser: context.actingUser, context, logger: dependencies.logger };
  // A relative write's target version, read before its preview and sealed with the card and the
  // state: the digest covers it, so an approval binds the record as it was shown.
  const guarded = request ? await capturePreconditions(resolved, request) : resolved;
  const calls = guarded.map(({ call }) => call);
  const digest = computeTurnDigest(record.runId, record.turn, calls);
  const captured = request ? await capturePreviews({ calls: guarded, ...request }) : calls;
  return {
    calls,
    // An external run's previews are its caller's lines, bounded and quoted when it submitted them.
    previewed: state.external ? withCallerPreviews(captured, state.external.callerPreviews) : captured,
    digest,
    tools: runTools.tools,
    ownerName: (actingUser ?? owner)?.displayName,
  };
}

/** The card's plain fields: what the inbox, the gate and the escalation read without unsealing. */
function draftStoredCard(
  dependencies: FreshCardDependencies,
  { record }: StoredRun,
  { calls, digest, tools }: CapturedCalls,
): Omit<StoredCard, 'state' | 'sealedCard' | 'sealedToken' | 'waitId' | 'notification'> {
  const now = dependencies.clock.now();
  const expiresAt = approvalDeadline(now, dependencies.settings.approvalTimeoutSeconds);
  const escalation = planCardEscalation(record.policy.escalation, now, expiresAt);
  // Every tool a guarded call names, unconfirmed ones included: each gate covers them as writes.
  const writeToolNames = [
    ...new Set(calls.filter((call) => needsHumanApproval(call.guard)).map((call) => call.tool)),
  ];
  // The run's policy raised to the floor as it is now, with this turn's write tools (a tool the
  // floor names forces four-eyes); the decision raises it to the floor once more.
  const policy = applyPolicyFloor(record.policy, dependencies.settings.policyFloor, writeToolNames);
  // Calls whose tools declare they are decided together, as the tools are now (the card keeps it).
  const decisionGroups = groupCallsDecidedTogether(calls, (tool) => tools.get(tool)?.decidedWith);
  // An approver's edit makes the card their proposal: the gate keeps them from approving it.
  const editedBy = calls.find((call) => call.edited !== undefined)?.edited?.by;
  return {
    schemaVersion: STORED_CARD_SCHEMA_VERSION,
    runId: record.runId,
    owner: record.owner,
    label: record.label,
    configurationId: record.configurationId,
    turn: record.turn,
    digest,
    pausedAt: now.toISOString(),
    expiresAt: expiresAt.toISOString(),
    toolNames: [...new Set(calls.map((call) => call.tool))],
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
