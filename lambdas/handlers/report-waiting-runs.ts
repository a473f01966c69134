import { runInInvocationScope } from '../adapters/invocation-scope.js';
import { reportWaitingRuns, type WaitingRunsReport } from '../core/runs/report-waiting-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';

/**
 * Lambda entry point of the scheduled waiting-runs probe (an EventBridge rule every few
 * minutes): the table only, read-only. The schedule's event id is the correlation id.
 */
export const handler = (event: { id?: unknown } = {}): Promise<WaitingRunsReport> =>
  runInInvocationScope(
    {
      correlationId: typeof event.id === 'string' ? event.id.slice(0, 100) : 'scheduled',
      operation: 'ReportWaitingRuns',
    },
    () => reportWaitingRuns(awsBaseDependencies()),
  );
