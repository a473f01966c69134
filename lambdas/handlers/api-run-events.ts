import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { awsAnnouncingRuns } from './composition/aws-announcing-runs.js';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExecutionsOnDemand } from './composition/aws-executions-on-demand.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsTools } from './composition/aws-tools.js';
import { composeOnFirstInvocation } from './composition/compose-on-first-invocation.js';
import { eventsEndpointEnvironment } from './config.js';
import {
  createRunEventsFunctionUrlHandler,
  refuseWithoutBearerToken,
} from './http/run-events-function-url.js';
import { createOidcTokenVerifier } from './http/verify-oidc-token.js';
import { createRunEventsRoute } from './routes/events-routes.js';

const startResponse = (
  stream: Parameters<typeof awslambda.HttpResponseStream.from>[0],
  prelude: { statusCode: number; headers: Record<string, string> },
) => awslambda.HttpResponseStream.from(stream, prelude);

/**
 * Composed on the first request that carries a bearer token: what the stream reads, and Step
 * Functions only to stop the run of a card that cannot be opened (loaded on that first need).
 */
const handle = composeOnFirstInvocation(() => {
  const environment = eventsEndpointEnvironment();
  // No model and no EventBridge in this bundle.
  const dependencies = {
    ...awsBaseDependencies(),
    // A card it closes is announced (`Card Closed`): the channels update their messages.
    runs: awsAnnouncingRuns(),
    sealer: awsSealer(),
    tools: awsTools(),
    executions: awsExecutionsOnDemand(),
  };
  return createRunEventsFunctionUrlHandler({
    verify: createOidcTokenVerifier({
      issuerUrl: environment.COUNTERSIGN_JWT_ISSUER,
      audience: environment.COUNTERSIGN_JWT_AUDIENCE,
    }),
    route: createRunEventsRoute(dependencies),
    logger: dependencies.logger,
    startResponse,
  });
});

/**
 * Lambda entry point of GET /runs/{id}/events: a function URL with invoke mode RESPONSE_STREAM,
 * so server-sent events reach the client as they happen (an HTTP API integration buffers the
 * whole response). The function verifies the bearer token itself, against the HTTP API's issuer.
 */
export const handler = awslambda.streamifyResponse(async (event: LambdaFunctionURLEvent, responseStream) => {
  // The URL is public: no bearer token, no work (not even composing the dependencies).
  if (refuseWithoutBearerToken(event, responseStream, startResponse)) return;
  await handle(event, responseStream);
});
