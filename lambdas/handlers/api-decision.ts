import { createDecisionApi } from './apis/decision-api.js';
import { awsDecidingDependencies } from './composition/aws-deciding-dependencies.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import type { HttpLambdaHandler } from './http/http-api.js';

/** Lambda entry point of the HTTP API's `decision` route: what deciding a card needs, no model. */
export const handler: HttpLambdaHandler = composeOnFirstInvocation(() =>
  createDecisionApi(awsDecidingDependencies()),
);
