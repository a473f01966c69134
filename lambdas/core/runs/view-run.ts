import { CountersignError, isCountersignError } from '../errors.js';
import { hasGrant, isAdmin, type UserProfile } from '../identity.js';
import { buildPendingTools, type PendingToolView } from '../previews/build-pending-tools.js';
import { TEXTS } from '../texts.js';
import { parseApprovalCard } from './approval-card.js';
import { type CardPolicyView, describeCardPolicy } from './describe-card-policy.js';
import { unsealRunState } from './load-run.js';
import type { RunDependencies } from './run-dependencies.js';
import type { RunStatus } from './run-record.js';
import { unsealJson } from './sealed-json.js';

/** GET /runs/{id}: what the run's owner (or an admin) sees. */
export interface RunView {
  runId: string;
  owner: string;
  label: string;
  status: RunStatus;
  turn: number;
  createdAt: string;
  updatedAt: string;
  endedAt?: string;
  failureReason?: string;
  pausedAt?: string;
  expiresAt?: string;
  /** `sealed: 'refused'` when the run's sealed state could not be read (the run cannot continue). */
  transcript: { messages: number; toolCalls: number; finalAnswer?: string; sealed?: 'refused' };
  /** Present while the run waits for a decision. */
  digest?: string;
  pendingTools?: PendingToolView[];
  /** k-of-n progress while waiting, when the turn needs more than one approver. */
  approvals?: CardPolicyView['approvals'];
  /** Why this viewer may not approve the waiting turn; absent when they may. */
  approveRefusal?: string;
}

type ViewDependencies = Pick<RunDependencies, 'runs' | 'sealer' | 'tools' | 'pages' | 'logger'> &
  Partial<Pick<RunDependencies, 'metrics' | 'settings'>>;

/**
 * A run as its owner or an admin sees it. Anyone else gets the same 404 as for a run that
 * does not exist, so run ids cannot be probed.
 */
export async function viewRun(
  dependencies: ViewDependencies,
  viewer: UserProfile,
  runId: string,
): Promise<RunView> {
  const run = await dependencies.runs.getRun(runId);
  if (!run || (run.record.owner !== viewer.userId && !isAdmin(viewer))) {
    throw new CountersignError('not-found', TEXTS.runNotFound);
  }
  const { record } = run;
  const state = await unsealRunState(dependencies, run).catch((error: unknown) => {
    // A refused state must not hide the run's status and failure reason from its owner.
    if (isCountersignError(error, 'sealed-state-rejected')) return undefined;
    throw error;
  });
  const view: RunView = {
    runId,
    owner: record.owner,
    label: record.label,
    status: record.status,
    turn: record.turn,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(record.endedAt ? { endedAt: record.endedAt } : {}),
    ...(record.failureReason ? { failureReason: record.failureReason } : {}),
    transcript:
      state === undefined
        ? { messages: 0, toolCalls: 0, sealed: 'refused' }
        : {
            messages: state.transcript.length,
            toolCalls: state.transcript.reduce(
              (count, message) =>
                count + message.content.filter((block) => block.type === 'tool_call').length,
              0,
            ),
            ...(record.status === 'completed' && state.finalText !== undefined
              ? { finalAnswer: state.finalText }
              : {}),
          },
  };
  if (record.status !== 'waiting') return view;
  const stored = await dependencies.runs.getCard(runId);
  if (stored?.state !== 'waiting') return view;
  const card = parseApprovalCard(
    await unsealJson(dependencies.sealer, 'approval-card', runId, stored.sealedCard),
  );
  const [pendingTools, policyView] = await Promise.all([
    buildPendingTools({
      card,
      viewer,
      tools: dependencies.tools,
      context: { runId, pages: dependencies.pages },
      logger: dependencies.logger,
    }),
    describeCardPolicy({
      stored,
      card,
      viewer,
      tools: dependencies.tools,
      pages: dependencies.pages,
      logger: dependencies.logger,
      floor: dependencies.settings?.policyFloor,
    }),
  ]);
  const withheld = pendingTools.filter((call) => call.preview.status === 'withheld').length;
  if (withheld > 0) dependencies.metrics?.count('PreviewsWithheld', withheld);
  return {
    ...view,
    pausedAt: stored.pausedAt,
    expiresAt: stored.expiresAt,
    digest: stored.digest,
    pendingTools,
    ...(policyView.approvals ? { approvals: policyView.approvals } : {}),
    // Only a viewer who could decide is told why they may not approve.
    ...(policyView.approveRefusal && hasGrant(viewer, 'agent_approve')
      ? { approveRefusal: policyView.approveRefusal }
      : {}),
  };
}
