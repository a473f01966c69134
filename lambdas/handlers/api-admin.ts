import { createAdminApi } from './apis/admin-api.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsReceipts } from './composition/aws-receipts.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/** Lambda entry point of the HTTP API's `admin` routes: the table only (approver analytics too), no sealer and no model. */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createAdminApi({ ...awsBaseDependencies(), receipts: awsReceipts() }),
);
