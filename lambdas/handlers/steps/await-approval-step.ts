import * as z from 'zod/mini';
import { ERROR_NAMES, STATE_NAMES } from '../../contract/state-names.js';
import { type AwaitApprovalDependencies, awaitApproval } from '../../core/runs/await-approval.js';
import { defineStep, type StepDependencies, stepInputSchema } from './define-step.js';

/**
 * The `AwaitApproval` step (`lambda:invoke.waitForTaskToken`): the approval scan. A retried
 * pause whose turn is already decided ends the task with the decision's routing error
 * (`countersign.Approved` to ExecuteTools, `countersign.Rejected` to RecordRejection) instead of
 * waiting for a delivery that was made to an earlier attempt's token.
 */
export function createAwaitApprovalStep(dependencies: StepDependencies<AwaitApprovalDependencies>) {
  const step = defineStep(
    STATE_NAMES.awaitApproval,
    dependencies.logger,
    // An execution started before 0.3 still sends `owner`: stripped unread, like any unknown key.
    z.extend(stepInputSchema, { taskToken: z.string().check(z.minLength(1)) }),
    (input) => awaitApproval(dependencies, input),
  );
  return async (event: unknown): Promise<Record<string, never>> => {
    const outcome = await step(event);
    if (outcome.kind === 'waiting') return {};
    const routed = new Error('The turn was decided while its pause was retried.');
    routed.name = outcome.decision === 'reject' ? ERROR_NAMES.rejected : ERROR_NAMES.approved;
    throw routed;
  };
}
