import { type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  HttpApi,
  HttpMethod,
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
   * The authorizer every route uses. This is the hook for the JWT authorizer of a later change;
   * until then the handlers verify the bearer token themselves.
   *
   * @default - no API Gateway authorizer: each handler verifies the JWT it receives.
   */
  readonly authorizer?: IHttpRouteAuthorizer;
}

interface RouteSpecification {
  readonly path: string;
  readonly methods: HttpMethod[];
  readonly handler: 'api-runs' | 'api-inbox' | 'api-decision' | 'api-admin';
}

/** The routes of the HTTP API and the handler behind each. */
export const API_ROUTES: readonly RouteSpecification[] = [
  { path: '/runs', methods: [HttpMethod.POST], handler: 'api-runs' },
  { path: '/runs/{id}', methods: [HttpMethod.GET], handler: 'api-runs' },
  { path: '/runs/{id}/events', methods: [HttpMethod.GET], handler: 'api-runs' },
  { path: '/runs/{id}/decision', methods: [HttpMethod.POST], handler: 'api-decision' },
  { path: '/inbox', methods: [HttpMethod.GET], handler: 'api-inbox' },
  { path: '/', methods: [HttpMethod.GET], handler: 'api-inbox' },
  { path: '/admin/{proxy+}', methods: [HttpMethod.ANY], handler: 'api-admin' },
];

/**
 * The HTTP API in front of the api-* handlers, with JSON access logs on its default stage.
 *
 * @example
 * const api = new CountersignApi(this, 'Api', { functions, logRetention, removalPolicy });
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
      ...(props.authorizer === undefined ? {} : { defaultAuthorizer: props.authorizer }),
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogGroup),
        // No query strings or headers: a token must never reach a log.
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
      this.httpApi.addRoutes({ path: route.path, methods: route.methods, integration });
    }

    if (props.authorizer === undefined) {
      const reason =
        'Authentication comes in a later change: a JWT authorizer will be attached through the `authorizer` prop of CountersignApi (no Cognito pool: approvers come from the team identity provider). Until then the api-* handlers must verify the bearer token.';
      Validations.of(this.httpApi).acknowledge(
        { id: 'AwsSolutions-APIG4', reason },
        { id: 'AwsSolutions-COG4', reason },
      );
    }
  }

  /** The base URL of the default stage. */
  public get url(): string {
    return this.stage.url;
  }
}
