import { createAdminApi } from './apis/admin-api.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import type { HttpLambdaHandler } from './http/http-api.js';

let api: HttpLambdaHandler | undefined;

/** Lambda entry point of the HTTP API's `admin` routes: the table only, no sealer and no model. */
export const handler: HttpLambdaHandler = (event) => {
  api ??= createAdminApi(awsBaseDependencies());
  return api(event);
};
