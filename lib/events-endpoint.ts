import {
  type FunctionUrl,
  FunctionUrlAuthType,
  HttpMethod,
  type IFunction,
  InvokeMode,
  type Function as LambdaFunction,
} from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { EnvironmentVariableName } from '../lambdas/contract/environment.js';

/** Properties of {@link CountersignEventsEndpoint}. */
export interface CountersignEventsEndpointProps {
  /**
   * The `api-run-events` handler function (created with the others by CountersignFunctions:
   * read-only table and overflow access, a 90-second timeout).
   */
  readonly handler: LambdaFunction;
  /** The issuer the HTTP API's JWT authorizer checks; the function checks the same one. */
  readonly issuerUrl: string;
  /** The audiences (`aud` or `client_id`) the HTTP API accepts; at least one. */
  readonly audience: readonly string[];
}

/**
 * GET /runs/{id}/events on AWS: a Lambda function URL with invoke mode RESPONSE_STREAM, since
 * an HTTP API integration buffers the whole response and cannot stream server-sent events.
 * A function URL has no JWT authorizer, so its auth type is NONE and the handler verifies the
 * bearer token against the same issuer and audience as the HTTP API. What protects the public
 * URL: the handler refuses a request without a JWT-shaped bearer token before any other work,
 * and the function's reserved concurrency (`reservedConcurrency.events`) caps what a flood uses.
 *
 * @example
 * const events = new CountersignEventsEndpoint(this, 'Events', {
 *   handler: functions.get('api-run-events'), issuerUrl: auth.issuerUrl, audience: [clientId],
 * });
 * // GET `${events.url}runs/<runId>/events` with `Authorization: Bearer <token>`
 */
export class CountersignEventsEndpoint extends Construct {
  public readonly handler: IFunction;
  public readonly functionUrl: FunctionUrl;
  /** The base URL of the endpoint, ending in `/`. */
  public readonly url: string;

  public constructor(scope: Construct, id: string, props: CountersignEventsEndpointProps) {
    super(scope, id);
    if (props.audience.length === 0) {
      throw new Error(
        'CountersignEventsEndpoint: audience is empty; pass the audiences the HTTP API accepts, e.g. [userPoolClient.userPoolClientId].',
      );
    }
    this.handler = props.handler;
    props.handler.addEnvironment('COUNTERSIGN_JWT_ISSUER' satisfies EnvironmentVariableName, props.issuerUrl);
    props.handler.addEnvironment(
      'COUNTERSIGN_JWT_AUDIENCE' satisfies EnvironmentVariableName,
      props.audience.join(','),
    );
    this.functionUrl = props.handler.addFunctionUrl({
      // No IAM auth: approvers hold JWTs, not AWS credentials. The handler verifies the JWT.
      authType: FunctionUrlAuthType.NONE,
      invokeMode: InvokeMode.RESPONSE_STREAM,
      // Bearer tokens, never cookies: any origin may read a stream it holds a valid token for.
      cors: { allowedOrigins: ['*'], allowedMethods: [HttpMethod.GET], allowedHeaders: ['authorization'] },
    });
    this.url = this.functionUrl.url;
  }
}
