import type { PendingToolView } from '../approvals/build-pending-tools.js';
import type { CardPolicyView } from '../approvals/describe-card-policy.js';
import { describeOpenCard } from '../approvals/describe-open-card.js';
import { openRunCard, readStoredCard } from '../approvals/open-card.js';
import {
  endRunWithUnopenableCard,
  type UnopenableCard,
  unopenableCard,
} from '../approvals/unopenable-card.js';
import { CountersignError, isCountersignError } from '../errors.js';
import { hasGrant, type UserProfile } from '../identity.js';
import { TEXTS } from '../texts.js';
import { describeRunStatus, type RunStatusView } from './describe-run-status.js';
import { reportingRefusal, unsealRunStateUnlessRefused } from './load-run.js';
import type { CardReaderDependencies } from './run-dependencies.js';
import { type RunReader, readerOfRun } from './run-readers.js';
import type { RunRecord } from './run-record.js';

/** GET /runs/{id}: what the run's owner (or an admin) sees. */
export interface RunView extends RunStatusView {
  runId: string;
  owner: string;
  label: string;
  createdAt: string;
  pausedAt?: string;
  expiresAt?: string;
  /** `sealed: 'refused'` when the run's sealed state could not be read (the run cannot continue). */
  transcript: { messages: number; toolCalls: number; finalAnswer?: string; sealed?: 'refused' };
  /** Present while the run waits for a decision. */
  digest?: string;
  pendingTools?: PendingToolView[];
  /** The flagged placeholder when the waiting card could not be opened (the run is then ended). */
  unopenableCard?: UnopenableCard;
  /** k-of-n progress while waiting, when the turn needs more than one approver. */
  approvals?: CardPolicyView['approvals'];
  /** Why this viewer may not approve the waiting turn; absent when they may. */
  approveRefusal?: string;
  /** The approver groups the waiting card was routed to; absent: every approver. */
  approverGroups?: string[];
}

/**
 * A run as its owner, an admin or an approver its card was routed to sees it (a decider opens
 * the run they decided; run-readers.ts). Anyone else gets the same 404 as for a run that does
 * not exist, so run ids cannot be probed. The final answer is the owner's (and admins'): an
 * approver reads what they were asked to decide, not what the run found.
 */
export async function viewRun(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  runId: string,
): Promise<RunView> {
  const run = await readRun(dependencies, runId);
  const reader = run && (await readerOf(dependencies, viewer, run.record));
  if (!run || reader === undefined) throw new CountersignError('not-found', TEXTS.runNotFound);
  const { record, sealedState } = run;
  const state =
    sealedState === undefined
      ? undefined
      : await unsealRunStateUnlessRefused(dependencies, { record, sealedState });
  const view: RunView = {
    runId,
    owner: record.owner,
    label: record.label,
    createdAt: record.createdAt,
    ...describeRunStatus(record),
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
            ...(record.status === 'completed' && state.finalText !== undefined && reader !== 'approver'
              ? { finalAnswer: state.finalText }
              : {}),
          },
  };
  if (record.status !== 'waiting') return view;
  const opened = await openRunCard(dependencies, runId);
  if (opened.kind === 'not-open') return view;
  if (opened.kind === 'unopenable') {
    // A card that cannot be opened can never be decided: the run ends, and the view says so.
    await endRunWithUnopenableCard(dependencies, runId);
    return {
      ...withRecordOf(view, await dependencies.runs.getRunRecord(runId)),
      unopenableCard: unopenableCard(runId),
    };
  }
  const { stored } = opened;
  const { pendingTools, ...policyView } = await describeOpenCard(dependencies, viewer, opened);
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
    ...(stored.approverGroups && stored.approverGroups.length > 0
      ? { approverGroups: stored.approverGroups }
      : {}),
  };
}

/** Who reads the run; the card (its routing) is read only for a viewer who is neither owner nor admin. */
async function readerOf(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  record: RunRecord,
): Promise<RunReader | undefined> {
  const reader = readerOfRun(viewer, record, undefined);
  if (reader !== undefined || !hasGrant(viewer, 'agent_approve')) return reader;
  const read = await readStoredCard(dependencies, record.runId);
  return read.kind === 'stored' ? readerOfRun(viewer, record, read.stored) : undefined;
}

/** The run; when its sealed state is refused before it can even be read (overflow), the record alone. */
async function readRun(
  dependencies: CardReaderDependencies,
  runId: string,
): Promise<{ record: RunRecord; sealedState?: Uint8Array } | undefined> {
  try {
    return await reportingRefusal(dependencies, runId, () => dependencies.runs.getRun(runId));
  } catch (error) {
    if (!isCountersignError(error, 'sealed-state-rejected')) throw error;
    const record = await dependencies.runs.getRunRecord(runId);
    return record ? { record } : undefined;
  }
}

/** The view with the record's status fields as they are now (after the run was ended). */
function withRecordOf(view: RunView, record: RunRecord | undefined): RunView {
  if (!record) return view;
  return { ...view, ...describeRunStatus(record) };
}
