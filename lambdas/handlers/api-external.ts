import { createExternalApi } from './apis/external-api.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExecutions } from './composition/aws-executions.js';
import { awsExternalRuns } from './composition/aws-external-runs.js';
import { awsSealer } from './composition/aws-sealer.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/**
 * Lambda entry point of the approval API of agents that run elsewhere: the sealer, Step
 * Functions (StartExecution) and the client keys; no tools and no model.
 */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createExternalApi({
    ...awsBaseDependencies(),
    sealer: awsSealer(),
    executions: awsExecutions(),
    externalRuns: awsExternalRuns(),
  }),
);
