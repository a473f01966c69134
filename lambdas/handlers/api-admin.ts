import { createAdminApi } from './apis/admin-api.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/** Lambda entry point of the HTTP API's `admin` routes: the table only, no sealer and no model. */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createAdminApi(awsBaseDependencies()),
);
