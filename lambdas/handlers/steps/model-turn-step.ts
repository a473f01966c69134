import { STATE_NAMES } from '../../contract/state-names.js';
import { type ModelTurnDependencies, takeModelTurn } from '../../core/runs/take-model-turn.js';
import { defineStep, type StepDependencies, stepInputSchema } from './define-step.js';

/** The `ModelTurn` step: the only one that talks to a model. */
export function createModelTurnStep(dependencies: StepDependencies<ModelTurnDependencies>) {
  return defineStep(STATE_NAMES.modelTurn, dependencies.logger, stepInputSchema, (input) =>
    takeModelTurn(dependencies, input),
  );
}
