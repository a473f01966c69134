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
import type { CountersignFunctions } from './functions.js';

/** Properties of {@link CountersignApi}. */
export interface CountersignApiProps {
  readonly functions: CountersignFunctions;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /**
   * The JWT authorizer of every route except `GET /` (the page shell, which holds no data):
   * API Gateway refuses a missing, forged, expired or wrong-audience token before any Lambda runs.
   */
  readonly authorizer: IHttpRouteAuthorizer;
  /** The default route throttling of the stage: every route, 429 above it. */
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
}

interface RouteSpecification {
  readonly path: string;
  readonly methods: HttpMethod[];
  readonly handler: 'api-runs' | 'api-inbox' | 'api-decision' | 'api-admin' | 'api-generate';
  /** True for the one route without a token: the inbox page shell. */
  readonly public?: boolean;
}

/** The routes of the HTTP API and the handler behind each. */
export const API_ROUTES: readonly RouteSpecification[] = [
  { path: '/runs', methods: [HttpMethod.POST], handler: 'api-runs' },
  { path: '/runs/{id}', methods: [HttpMethod.GET], handler: 'api-runs' },
  // GET /runs/{id}/events streams (server-sent events) from its own function URL (lib/events-endpoint.ts):
  // an HTTP API integration buffers the response, so it is not routed here.
  { path: '/runs/{id}/decision', methods: [HttpMethod.POST], handler: 'api-decision' },
  // The whole arguments of a call a card excerpts: the inbox's reader, with the inbox's reads.
  { path: '/runs/{id}/calls/{index}', methods: [HttpMethod.GET], handler: 'api-inbox' },
  { path: '/runs/{id}/cancel', methods: [HttpMethod.POST], handler: 'api-runs' },
  { path: '/inbox', methods: [HttpMethod.GET], handler: 'api-inbox' },
  { path: '/', methods: [HttpMethod.GET], handler: 'api-inbox', public: true },
  { path: '/admin/{proxy+}', methods: [HttpMethod.ANY], handler: 'api-admin' },
  // Seed 003's configuration-driven completion and translation: synchronous, bounded below 30 s.
  { path: '/configurations/{id}/complete', methods: [HttpMethod.POST], handler: 'api-generate' },
  { path: '/configurations/{id}/translate', methods: [HttpMethod.POST], handler: 'api-generate' },
];

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
    for (const route of API_ROUTES) {
      let integration = integrations.get(route.handler);
      if (integration === undefined) {
        const handler: IFunction = props.functions.get(route.handler);
        integration = new HttpLambdaIntegration(`${route.handler}-integration`, handler);
        integrations.set(route.handler, integration);
      }
      const routes = this.httpApi.addRoutes({
        path: route.path,
        methods: route.methods,
        integration,
        authorizer: route.public ? new HttpNoneAuthorizer() : props.authorizer,
      });
      if (route.public) {
        for (const publicRoute of routes) {
          Validations.of(publicRoute).acknowledge({
            id: 'AwsSolutions-APIG4',
            reason:
              'GET / serves the static inbox page shell only: it holds no data and acts on nothing. A browser cannot send a bearer token when it navigates, so the page asks for the token and every request it makes (GET /inbox, POST decisions) goes through the JWT authorizer.',
          });
        }
      }
    }
  }

  /** The base URL of the default stage. */
  public get url(): string {
    return this.stage.url;
  }
}
