import { STATE_NAMES } from '../../contract/state-names.js';
import { executeTools } from '../../core/runs/execute-tools.js';
import { defineStep, type StepDependencies, stepInputSchema } from './define-step.js';

/** The `ExecuteTools` step: runs the turn's calls that may run. */
export function createExecuteToolsStep(dependencies: StepDependencies<typeof executeTools>) {
  return defineStep(STATE_NAMES.executeTools, dependencies.logger, stepInputSchema, (input) =>
    executeTools(dependencies, input),
  );
}
