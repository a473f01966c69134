import * as z from 'zod/mini';
import { STATE_NAMES } from '../../contract/state-names.js';
import { awaitApproval } from '../../core/runs/await-approval.js';
import { defineStep, type StepDependencies, stepInputSchema } from './define-step.js';

/** The `AwaitApproval` step (`lambda:invoke.waitForTaskToken`): the approval scan. */
export function createAwaitApprovalStep(dependencies: StepDependencies<typeof awaitApproval>) {
  return defineStep(
    STATE_NAMES.awaitApproval,
    dependencies.logger,
    z.extend(stepInputSchema, {
      taskToken: z.string().check(z.minLength(1)),
      owner: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
    }),
    async (input) => {
      await awaitApproval(dependencies, input);
      return {};
    },
  );
}
