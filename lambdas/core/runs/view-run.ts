import { type CardView, viewWaitingCard } from '../approvals/card-reader.js';
import type { UnopenableCard } from '../approvals/unopenable-card.js';
import { CountersignError, isCountersignError } from '../errors.js';
import { hasGrant, type UserProfile } from '../identity.js';
import type { CardReaderDependencies } from '../run-dependencies.js';
import type { RunFailure, RunRecord } from '../run-record.js';
import { TEXTS } from '../texts.js';
import { buildRunStatusView, type RunStatusView } from './build-run-status-view.js';
import { reportingRefusal, unsealRunStateUnlessRefused } from './load-run.js';
import { type RunReader, readerOfRun } from './run-readers.js';

/** GET /runs/{id}: what the run's readers see; while it waits, the part of its card view below. */
export interface RunView
  extends RunStatusView,
    Partial<
      Pick<
        CardView,
        | 'pausedAt'
        | 'expiresAt'
        | 'digest'
        | 'pendingTools'
        | 'approvals'
        | 'approveRefusal'
        | 'approverGroups'
        | 'context'
      >
    > {
  runId: string;
  owner: string;
  label: string;
  createdAt: string;
  /** `sealed: 'refused'` when the run's sealed state could not be read (the run cannot continue). */
  transcript: { messages: number; toolCalls: number; finalAnswer?: string; sealed?: 'refused' };
  /** The flagged placeholder when the waiting card could not be opened (the run is then ended). */
  unopenableCard?: UnopenableCard;
  /** The model tokens and calls of the run so far; absent before its first model turn. */
  usage?: NonNullable<RunRecord['usage']>;
  /**
   * Where a failed run failed and whether a redrive may resume it (`transient`); the error is
   * the name the state machine caught, never a message. Only while the run is `failed`.
   */
  failure?: Pick<RunFailure, 'step' | 'turn' | 'error' | 'transient'>;
  /** How many times the run was redriven (POST /runs/{id}/redrive). */
  redrives?: number;
}

/**
 * A run as its owner, an admin or an approver its card was routed to sees it (a decider opens
 * the run they decided; run-readers.ts). Anyone else gets the same 404 as for a run that does
 * not exist, so run ids cannot be probed. The final answer, the usage and a failure are the
 * owner's (and admins'): an approver reads what they were asked to decide, not what the run
 * found or cost.
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
    ...buildRunStatusView(record),
    // Spend and recovery are the owner's and operators' to act on (an approver cannot redrive).
    ...(reader === 'approver' ? {} : buildSpendAndRecoveryView(record)),
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
  const reading = await viewWaitingCard(dependencies, viewer, runId);
  if (reading.kind === 'none') return view;
  if (reading.kind === 'unopenable') {
    // The reader ended the run: the view says so, with the record's status as it is now.
    return {
      ...withRecordOf(view, await dependencies.runs.getRunRecord(runId)),
      unopenableCard: reading.placeholder,
    };
  }
  const { pausedAt, expiresAt, digest, pendingTools, approvals, approveRefusal, approverGroups, context } =
    reading.view;
  return {
    ...view,
    pausedAt,
    expiresAt,
    digest,
    pendingTools,
    ...(approvals ? { approvals } : {}),
    ...(approveRefusal ? { approveRefusal } : {}),
    ...(approverGroups ? { approverGroups } : {}),
    ...(context ? { context } : {}),
  };
}

/**
 * Who reads the run. The card (its routing) is read only for an approver who is neither owner nor
 * admin, and only its plaintext: a card whose item does not parse routes to nobody.
 */
async function readerOf(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  record: RunRecord,
): Promise<RunReader | undefined> {
  const reader = readerOfRun(viewer, record, undefined);
  if (reader !== undefined || !hasGrant(viewer, 'agent_approve')) return reader;
  const card = await dependencies.runs.getCard(record.runId).catch((error: unknown) => {
    if (isCountersignError(error, 'sealed-state-rejected')) return undefined;
    throw error;
  });
  return readerOfRun(viewer, record, card);
}

/** The run's model usage, and where it failed and how often it was redriven (what an operator acts on). */
function buildSpendAndRecoveryView(record: RunRecord): Pick<RunView, 'usage' | 'failure' | 'redrives'> {
  const failure = record.status === 'failed' ? record.failure : undefined;
  return {
    ...(record.usage ? { usage: record.usage } : {}),
    ...(failure
      ? {
          failure: {
            step: failure.step,
            turn: failure.turn,
            error: failure.error,
            transient: failure.transient,
          },
        }
      : {}),
    ...(record.redrive ? { redrives: record.redrive.count } : {}),
  };
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
  return { ...view, ...buildRunStatusView(record) };
}
