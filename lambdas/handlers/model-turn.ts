import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsMcp } from './composition/aws-mcp.js';
import { awsModels } from './composition/aws-models.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsTools } from './composition/aws-tools.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { StepHandlers } from './step-handlers.js';
import { createModelTurnStep } from './steps/model-turn-step.js';

/** Lambda entry point of the state machine's `ModelTurn` state. */
export const handler: StepHandlers['ModelTurn'] = composeOnFirstInvocation(() =>
  createModelTurnStep({
    ...awsBaseDependencies(),
    sealer: awsSealer(),
    tools: awsTools(),
    mcp: awsMcp(),
    models: awsModels(),
  }),
);
