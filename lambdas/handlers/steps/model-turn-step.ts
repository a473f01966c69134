import { takeModelTurn } from '../../core/runs/take-model-turn.js';
import { defineStep, type StepDependencies, stepInputSchema } from './define-step.js';

/** The `ModelTurn` step: the only one that talks to a model. */
export function createModelTurnStep(dependencies: StepDependencies<typeof takeModelTurn>) {
  return defineStep('ModelTurn', dependencies.logger, stepInputSchema, (input) =>
    takeModelTurn(dependencies, input),
  );
}
