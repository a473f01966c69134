import { type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  HttpStage,
  type IHttpRouteAuthorizer,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { EXTERNAL_RUNS_SCOPE, type RouteAuth } from '../lambdas/contract/route-definition.js';
import { type OperationId, ROUTES, type Route, transportOf } from '../lambdas/contract/routes.js';
import type { CountersignFunctions } from './countersign-functions.js';

/** Properties of {@link CountersignApi}. */
export interface CountersignApiProps {
  readonly functions: CountersignFunctions;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /**
   * The JWT authorizer of every route the manifest gives `auth: 'jwt'` (all but `GET /`, the page shell, which holds no data):
   * API Gateway refuses a missing, forged, expired or wrong-audience token before any Lambda runs.
   */
  readonly authorizer: IHttpRouteAuthorizer;
  /**
   * The authorizer of every `machine` route (the approval API of agents that run elsewhere),
   * which also requires the scope `countersign/external-runs`: the agents' machine clients only
   * (docs/external-agents.md).
   */
  readonly machineAuthorizer: IHttpRouteAuthorizer;
  /** The default route throttling of the stage: every route, 429 above it. */
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  /**
   * The functions of the channels' routes that are on (`channels.slack`): a channel route
   * without one is not added, so it is API Gateway's 404, as for any unknown route.
   * @default - none
   */
  readonly channelFunctions?: Readonly<Partial<Record<'slack-interactions', IFunction>>>;
}

/**
 * The routes of the HTTP API: the manifest's served routes reached through it, each added alone
 * (an unknown path or method is API Gateway's 404, and no Lambda runs). GET /runs/{id}/events is
 * a `function-url` route: it streams from its own function URL (lib/events-endpoint.ts), because
 * an HTTP API integration buffers the response.
 */
const HTTP_API_ROUTES: readonly Route[] = ROUTES.filter((route) => transportOf(route) === 'http-api');

/** Why a public route may have no authorizer, by operation (cdk-nag's APIG4 asks for each). */
const PUBLIC_ROUTE_REASONS: Readonly<Record<string, string>> = {
  receiveSlackInteraction:
    'POST /integrations/slack/interactions is Slack’s interactivity Request URL: Slack cannot send a JWT. Its function verifies Slack’s request signature (HMAC-SHA256 of the raw body with the app’s signing secret, within 5 minutes, each signature once) before it reads anything, and acts as a countersign user only through the admin’s link of that Slack user.',
  getInboxPage:
    'GET / serves the static inbox page shell only: it holds no data and acts on nothing. A browser cannot send a bearer token when it navigates, so the page asks for the token and every request it makes (GET /inbox, POST decisions) goes through the JWT authorizer.',
  getCardPage:
    "GET /inbox/runs/{id} serves the same static inbox page shell as GET / (a card's own address, for links in notifications): it holds no data and acts on nothing; the page reads the run with the viewer's bearer token through the JWT authorizer.",
  getSignInLibrary:
    "GET /assets/oauth-client.js serves the published OAuth client library the page signs in with (pinned by the page's integrity): code, no data, acts on nothing.",
  getOpenApiDocument:
    'GET /openapi.json serves the OpenAPI description generated from the request and response schemas: it describes shapes, holds no data and acts on nothing.',
  getRunbook:
    'GET /runbook serves the operators’ runbook (docs/runbook.md of the deployed version), which every alarm links to: it holds no data and acts on nothing, and an on-call engineer following an alarm must read it without first finding a token.',
};

/**
 * The HTTP API in front of the api-* handlers, with JSON access logs on its default stage.
 *
 * @example
 * const api = new CountersignApi(this, 'Api', { functions, logRetention, removalPolicy, authorizer });
 * new CfnOutput(this, 'ApiUrl', { value: api.url });
 */
export class CountersignApi extends Construct {
  public readonly httpApi: HttpApi;
  public readonly stage: HttpStage;
  public readonly accessLogGroup: LogGroup;

  public constructor(scope: Construct, id: string, props: CountersignApiProps) {
    super(scope, id);
    this.accessLogGroup = new LogGroup(this, 'AccessLogGroup', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });

    this.httpApi = new HttpApi(this, 'HttpApi', {
      description: 'countersign: runs, approval inbox and decisions',
      // The default stage is created below so that it can carry access logging.
      createDefaultStage: false,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.throttling.rateLimit, burstLimit: props.throttling.burstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogGroup),
        // No query strings or headers: a token must never reach a log; the caller is its `sub` claim.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTime',
            httpMethod: '$context.httpMethod',
            routeKey: '$context.routeKey',
            status: '$context.status',
            responseLength: '$context.responseLength',
            integrationLatency: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            sourceIp: '$context.identity.sourceIp',
            // Who called: the verified token's subject, never the token itself ("-" on GET /).
            sub: '$context.authorizer.claims.sub',
          }),
        ),
      },
    });

    const integrations = new Map<string, HttpLambdaIntegration>();
    for (const route of HTTP_API_ROUTES) {
      let integration = integrations.get(route.function);
      if (integration === undefined) {
        const handler =
          route.function === 'slack-interactions'
            ? props.channelFunctions?.[route.function]
            : props.functions.get(route.function);
        // A channel that is off has no function: its route does not exist.
        if (handler === undefined) continue;
        integration = new HttpLambdaIntegration(`${route.function}-integration`, handler);
        integrations.set(route.function, integration);
      }
      // No authorizer: anyone may call it (Slack's route checks Slack's signature itself).
      const isPublic = route.auth === 'none' || route.auth === 'slack-signature';
      const reason = PUBLIC_ROUTE_REASONS[route.operationId];
      if (isPublic && reason === undefined) {
        throw new Error(
          `Route ${route.method} ${route.path} (${route.operationId}) is public in the manifest but has no reason in PUBLIC_ROUTE_REASONS: add one, or give it auth 'jwt'.`,
        );
      }
      const [added] = this.httpApi.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration,
        ...authorizationOf(route.auth, props),
      });
      if (isPublic && added)
        Validations.of(added).acknowledge({ id: 'AwsSolutions-APIG4', reason: String(reason) });
    }
  }

  /** The base URL of the default stage. */
  public get url(): string {
    return this.stage.url;
  }

  /**
   * The URL of a route of the HTTP API without path parameters, from the manifest.
   *
   * @example
   * api.urlOf('getRunbook'); // `${api.url}runbook`
   */
  public urlOf(operationId: OperationId): string {
    const route = HTTP_API_ROUTES.find((candidate) => candidate.operationId === operationId);
    if (route === undefined || route.path.includes('{')) {
      throw new Error(`${operationId} is not an HTTP API route without path parameters.`);
    }
    return `${this.url}${route.path.slice(1)}`;
  }
}

/** A route's authorizer: none, a person's token, or a machine client's token with the external-runs scope. */
function authorizationOf(
  auth: RouteAuth,
  props: Pick<CountersignApiProps, 'authorizer' | 'machineAuthorizer'>,
): { authorizer: IHttpRouteAuthorizer; authorizationScopes?: string[] } {
  if (auth === 'none' || auth === 'slack-signature') return { authorizer: new HttpNoneAuthorizer() };
  if (auth === 'jwt') return { authorizer: props.authorizer };
  return { authorizer: props.machineAuthorizer, authorizationScopes: [EXTERNAL_RUNS_SCOPE] };
}
