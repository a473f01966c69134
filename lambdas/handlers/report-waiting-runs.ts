import { runInInvocationScope } from '../adapters/invocation-scope.js';
import { type RedeliveryReport, redeliverDecisions } from '../core/runs/redeliver-decisions.js';
import { reportWaitingRuns, type WaitingRunsReport } from '../core/runs/report-waiting-runs.js';
import { ToolRegistry } from '../core/tools/tool.js';
import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExecutionsOnDemand } from './composition/aws-executions-on-demand.js';
import { awsReceipts } from './composition/aws-receipts.js';
import { awsSealer } from './composition/aws-sealer.js';

/**
 * Lambda entry point of the scheduled waiting-runs probe (an EventBridge rule every few
 * minutes): first it delivers the claimed decisions whose request failed before delivering
 * them (the card's sealed token, Step Functions), then it measures the waiting runs. The
 * schedule's event id is the correlation id.
 */
export const handler = (event: { id?: unknown } = {}): Promise<WaitingRunsReport & RedeliveryReport> =>
  runInInvocationScope(
    {
      correlationId: typeof event.id === 'string' ? event.id.slice(0, 100) : 'scheduled',
      operation: 'ReportWaitingRuns',
    },
    async () => {
      const dependencies = {
        ...awsBaseDependencies(),
        // A card a redelivery closes is announced (`Card Closed`): the channels update their messages.
        runs: awsAnnouncingRuns(),
        sealer: awsSealer(),
        // Step Functions only when a claim needs redelivering: most probes find none.
        executions: awsExecutionsOnDemand(),
        // The probe opens task tokens only, never a call: no tool is resolved, none is bundled.
        tools: new ToolRegistry(),
        // The chain only: a claim is redelivered once its receipt entry is on it.
        receipts: awsReceipts(),
      };
      const redelivery = await redeliverDecisions(dependencies);
      return { ...(await reportWaitingRuns(dependencies)), ...redelivery };
    },
  );
