import { CountersignError } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { RunDependencies } from '../run-dependencies.js';
import type { RunRecord } from '../run-record.js';
import { loadRun, unsealRunState } from '../runs/load-run.js';
import { TEXTS } from '../texts.js';
import { answerForCall } from './call-answer.js';
import type { ExecutionOutcome, ExternalRunStore } from './external-run-store.js';
import { callerToolName } from './external-tool-names.js';

/** Where an external run stands, as its caller reads it. */
export const EXTERNAL_RUN_STATUSES = ['pending', 'decided', 'expired', 'cancelled', 'failed'] as const;
export type ExternalRunStatus = (typeof EXTERNAL_RUN_STATUSES)[number];

/**
 * The answer for one call, by its position in the submitted turn: its own choice when the
 * approver decided per call, else the turn's decision.
 */
export interface ExternalCallAnswer {
  index: number;
  callId: string;
  /** The caller's name of the tool. */
  tool: string;
  decision: 'approved' | 'rejected';
  /** The approver's reason for a rejection, when the configuration reveals it (`revealRejectionReason`). */
  reason?: string;
  /**
   * An approved call an approver edited (its tool declared `editable`): the arguments to run
   * instead of the caller's own. A caller that runs the call runs these.
   */
  arguments?: Record<string, unknown>;
  /** An approved call an approver edited: who edited it (someone else approved it under four-eyes). */
  edited?: { by: string };
}

/** What the caller reported it did with a call (the audit), as the API shows it. */
export interface ExecutionReportView {
  index: number;
  outcome: ExecutionOutcome;
  /** False for a call that was not approved: the report is kept, and flagged here. */
  approved: boolean;
  reportedAt: string;
  detail?: string;
}

/** An external run as its caller reads it: GET /external-runs/{id}, the webhook's body. */
export interface ExternalRunView {
  runId: string;
  status: ExternalRunStatus;
  configurationId: string;
  createdAt: string;
  /** While pending and on its card: when the approval window closes. */
  expiresAt?: string;
  /** Decided: when the decision was taken. */
  decidedAt?: string;
  endedAt?: string;
  /** Why an expired, cancelled or failed run ended, in words a client may read. */
  reason?: string;
  /** Decided: every call's answer, in the order submitted. */
  calls?: ExternalCallAnswer[];
  reports: ExecutionReportView[];
}

export type ExternalAnswerDependencies = Pick<RunDependencies, 'runs' | 'sealer' | 'logger' | 'metrics'> & {
  externalRuns: ExternalRunStore;
};

/**
 * The external run `runId` as its owner may read it: only the machine client that submitted it
 * (any other caller gets the 404 of a run that does not exist).
 *
 * @example
 * const record = await readOwnExternalRun(dependencies, principal, runId);
 */
export async function readOwnExternalRun(
  dependencies: Pick<RunDependencies, 'runs'>,
  principal: UserProfile,
  runId: string,
): Promise<RunRecord> {
  const record = await dependencies.runs.getRunRecord(runId);
  if (record?.kind !== 'external' || record.owner !== principal.userId) {
    throw new CountersignError('not-found', TEXTS.runNotFound);
  }
  return record;
}

/**
 * Describes an external run from its record; an ended one also reads its decision, its calls
 * (unsealed) and the caller's reports. A pending run costs nothing more than its record.
 *
 * @example
 * const view = await buildExternalRunView(dependencies, record); // { status: 'decided', calls: [...] }
 */
export async function buildExternalRunView(
  dependencies: ExternalAnswerDependencies,
  record: RunRecord,
): Promise<ExternalRunView> {
  const base = {
    runId: record.runId,
    configurationId: record.configurationId,
    createdAt: record.createdAt,
    ...(record.endedAt === undefined ? {} : { endedAt: record.endedAt }),
  };
  switch (record.status) {
    case 'running':
    case 'waiting':
      return {
        ...base,
        status: 'pending',
        ...(record.expiresAt === undefined ? {} : { expiresAt: record.expiresAt }),
        reports: [],
      };
    case 'completed':
      return buildDecidedRunView(dependencies, record, base);
    case 'cancelled':
      return {
        ...base,
        status: 'cancelled',
        reason: TEXTS.runCancelled,
        reports: await reportsOf(dependencies, record),
      };
    case 'expired':
    case 'failed':
      return {
        ...base,
        status: record.status,
        reason: record.failureReason ?? TEXTS.internalFailure,
        reports: await reportsOf(dependencies, record),
      };
  }
}

async function buildDecidedRunView(
  dependencies: ExternalAnswerDependencies,
  record: RunRecord,
  base: Omit<ExternalRunView, 'status' | 'reports'>,
): Promise<ExternalRunView> {
  const [decision, run, reports] = await Promise.all([
    dependencies.runs.getDecision(record.runId, record.turn),
    loadRun(dependencies, record.runId),
    reportsOf(dependencies, record),
  ]);
  if (!decision || decision.decision === 'cancel') {
    throw new CountersignError('internal', 'A decided external run has no decision on record.', {
      expose: false,
    });
  }
  const state = await unsealRunState(dependencies, run);
  return {
    ...base,
    status: 'decided',
    decidedAt: decision.decidedAt,
    calls: state.pendingCalls.map((call): ExternalCallAnswer => {
      const identity = { index: call.index, callId: call.callId, tool: callerToolName(call.tool) };
      const answer = answerForCall(decision, call);
      if (answer.decision === 'approved') return { ...identity, ...answer };
      const reason = record.policy.revealRejectionReason ? answer.reason : undefined;
      return { ...identity, decision: 'rejected', ...(reason === undefined ? {} : { reason }) };
    }),
    reports,
  };
}

async function reportsOf(
  dependencies: ExternalAnswerDependencies,
  record: RunRecord,
): Promise<ExecutionReportView[]> {
  const reports = await dependencies.externalRuns.listExecutions(record.runId);
  return reports.map((report) => ({
    index: report.index,
    outcome: report.outcome,
    approved: report.approved,
    reportedAt: report.reportedAt,
    ...(report.detail === undefined ? {} : { detail: report.detail }),
  }));
}
