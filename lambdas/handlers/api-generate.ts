import { createGenerateApi } from './apis/generate-api.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsModels } from './composition/aws-models.js';
import type { HttpLambdaHandler } from './http/http-api.js';

let api: HttpLambdaHandler | undefined;

/**
 * Lambda entry point of the HTTP API's completion and translation routes: the table (the
 * user, the configuration, its skills) and the model clients; no sealer, tools or Step Functions.
 */
export const handler: HttpLambdaHandler = (event) => {
  api ??= createGenerateApi({ ...awsBaseDependencies(), models: awsModels() });
  return api(event);
};
