import { CountersignError, isCountersignError } from '../errors.js';
import { isAdmin, type UserProfile } from '../identity.js';
import { buildPendingTools, type PendingToolView } from '../previews/build-pending-tools.js';
import { TEXTS } from '../texts.js';
import { parseApprovalCard } from './approval-card.js';
import { describeCancellation } from './describe-cancellation.js';
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
  /** Present once the run was cancelled: who, and why when they said. */
  cancellation?: { by: string; reason?: string };
  pausedAt?: string;
  expiresAt?: string;
  /** `sealed: 'refused'` when the run's sealed state could not be read (the run cannot continue). */
  transcript: { messages: number; toolCalls: number; finalAnswer?: string; sealed?: 'refused' };
  /** Present while the run waits for a decision. */
  digest?: string;
  pendingTools?: PendingToolView[];
}

type ViewDependencies = Pick<RunDependencies, 'runs' | 'sealer' | 'tools' | 'pages' | 'logger'> &
  Partial<Pick<RunDependencies, 'metrics'>>;

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
    ...describeCancellation(record),
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
  const pendingTools = await buildPendingTools({
    card,
    viewer,
    tools: dependencies.tools,
    context: { runId, pages: dependencies.pages },
    logger: dependencies.logger,
  });
  const withheld = pendingTools.filter((call) => call.preview.status === 'withheld').length;
  if (withheld > 0) dependencies.metrics?.count('PreviewsWithheld', withheld);
  return {
    ...view,
    pausedAt: stored.pausedAt,
    expiresAt: stored.expiresAt,
    digest: stored.digest,
    pendingTools,
  };
}
