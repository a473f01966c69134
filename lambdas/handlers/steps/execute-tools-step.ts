import { STATE_NAMES } from '../../contract/state-names.js';
import type { ToolStepDependencies } from '../../core/run-dependencies.js';
import { executeTools } from '../../core/runs/execute-tools.js';
import { defineStep, type StepDependencies, stepInputSchema } from './define-step.js';

/** The `ExecuteTools` step: runs the turn's calls that may run. */
export function createExecuteToolsStep(dependencies: StepDependencies<ToolStepDependencies>) {
  return defineStep(STATE_NAMES.executeTools, dependencies.logger, stepInputSchema, (input) =>
    executeTools(dependencies, input),
  );
}
