import * as z from 'zod/mini';
import { CountersignError } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { RunDependencies } from '../run-dependencies.js';
import { loadRun, unsealRunState } from '../runs/load-run.js';
import { MAX_TURN_CALLS } from '../runs/take-model-turn.js';
import { TEXTS } from '../texts.js';
import { decideCall } from './call-answer.js';
import {
  buildExternalRunView,
  type ExternalAnswerDependencies,
  type ExternalRunView,
  readOwnExternalRun,
} from './external-answer.js';
import {
  EXECUTION_OUTCOMES,
  EXECUTION_REPORT_SCHEMA_VERSION,
  type ExecutionReport,
} from './external-run-store.js';

/** The longest note a caller may keep with a report (what ran, a reference): text, never a secret. */
export const MAX_REPORT_DETAIL_CHARACTERS = 2_000;

/** `POST /external-runs/{id}/report`: what the caller did with each call of its decided turn. */
export const reportExecutionRequestSchema = z.strictObject({
  reports: z
    .array(
      z.strictObject({
        index: z.number().check(z.int(), z.nonnegative()),
        outcome: z.enum(EXECUTION_OUTCOMES),
        detail: z.optional(z.string().check(z.minLength(1), z.maxLength(MAX_REPORT_DETAIL_CHARACTERS))),
      }),
    )
    .check(z.minLength(1), z.maxLength(MAX_TURN_CALLS)),
});
export type ReportExecutionRequest = z.infer<typeof reportExecutionRequestSchema>;

/**
 * The caller reports what it executed, for the audit (docs/external-agents.md). Only once the
 * turn has ended; each call's first report stands (a conditional put), a repeat of it is
 * answered as recorded and a different one is a 409. A report of a call that was not approved
 * is kept and flagged (`approved: false`, a WARN line and `ExecutionsWithoutApproval`): the
 * audit must show what ran, approved or not.
 */
export async function reportExternalExecution(
  dependencies: ExternalAnswerDependencies & Pick<RunDependencies, 'clock'>,
  principal: UserProfile,
  runId: string,
  request: ReportExecutionRequest,
): Promise<ExternalRunView> {
  const record = await readOwnExternalRun(dependencies, principal, runId);
  if (record.status === 'running' || record.status === 'waiting') {
    throw new CountersignError('conflict', TEXTS.externalRunNotAnswered);
  }
  const indexes = request.reports.map((report) => report.index);
  if (new Set(indexes).size !== indexes.length) {
    throw new CountersignError('bad-request', TEXTS.externalReportsRepeated, { field: 'body.reports' });
  }
  const state = await unsealRunState(dependencies, await loadRun(dependencies, runId));
  const calls = state.pendingCalls.length;
  request.reports.forEach((report, position) => {
    if (report.index >= calls) {
      const field = `body.reports.${position}.index`;
      throw new CountersignError('bad-request', TEXTS.externalCallNotOnTurn(report.index, calls), { field });
    }
  });
  const decision =
    record.status === 'completed' ? await dependencies.runs.getDecision(runId, record.turn) : undefined;
  // Per call: an approver may have approved some calls of the turn and refused others.
  const approvedCall = (index: number) =>
    decision !== undefined &&
    decision.decision !== 'cancel' &&
    decideCall(decision, index).decision === 'approved';
  const reportedAt = dependencies.clock.now().toISOString();
  for (const report of request.reports) {
    const stored: ExecutionReport = {
      schemaVersion: EXECUTION_REPORT_SCHEMA_VERSION,
      runId,
      index: report.index,
      outcome: report.outcome,
      approved: approvedCall(report.index),
      reportedBy: principal.userId,
      reportedAt,
      ...(report.detail === undefined ? {} : { detail: report.detail }),
    };
    const outcome = await dependencies.externalRuns.recordExecution(stored);
    if (outcome.kind === 'exists') {
      const { existing } = outcome;
      if (existing.outcome !== report.outcome || existing.detail !== report.detail) {
        throw new CountersignError('conflict', TEXTS.externalReportConflict(report.index), {
          field: 'body.reports',
        });
      }
      continue;
    }
    if (!approvedCall(report.index) && report.outcome !== 'skipped') {
      dependencies.metrics.count('ExecutionsWithoutApproval');
      dependencies.logger.warn('external call reported run without approval', {
        runId,
        callIndex: report.index,
      });
    }
  }
  return buildExternalRunView(dependencies, record);
}
