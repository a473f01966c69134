import { createGenerateApi } from './apis/generate-api.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsModels } from './composition/aws-models.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/**
 * Lambda entry point of the HTTP API's completion and translation routes: the table (the
 * user, the configuration, its skills) and the model clients; no sealer, tools or Step Functions.
 */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createGenerateApi({ ...awsBaseDependencies(), models: awsModels() }),
);
