import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { awsBaseDependencies } from './composition/aws-base-dependencies.js';
import { awsExecutionsOnDemand } from './composition/aws-executions-on-demand.js';
import { awsSealer } from './composition/aws-sealer.js';
import { awsTools } from './composition/aws-tools.js';
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

let handle:
  | ((event: LambdaFunctionURLEvent, stream: awslambda.HttpResponseStream) => Promise<void>)
  | undefined;

/**
 * Lambda entry point of GET /runs/{id}/events: a function URL with invoke mode RESPONSE_STREAM,
 * so server-sent events reach the client as they happen (an HTTP API integration buffers the
 * whole response). The function verifies the bearer token itself, against the HTTP API's issuer.
 */
export const handler = awslambda.streamifyResponse(async (event: LambdaFunctionURLEvent, responseStream) => {
  // The URL is public: no bearer token, no work (not even composing the dependencies).
  if (refuseWithoutBearerToken(event, responseStream, startResponse)) return;
  if (!handle) {
    const environment = eventsEndpointEnvironment();
    // What the stream reads, no model, no EventBridge; Step Functions only to stop the run of a
    // card that cannot be opened.
    const dependencies = {
      ...awsBaseDependencies(),
      sealer: awsSealer(),
      tools: awsTools(),
      executions: awsExecutionsOnDemand(),
    };
    handle = createRunEventsFunctionUrlHandler({
      verify: createOidcTokenVerifier({
        issuerUrl: environment.COUNTERSIGN_JWT_ISSUER,
        audience: environment.COUNTERSIGN_JWT_AUDIENCE,
      }),
      route: createRunEventsRoute(dependencies),
      logger: dependencies.logger,
      startResponse,
    });
  }
  await handle(event, responseStream);
});
