import { App, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { ROUTES, routeKeyOf, transportOf } from '../../lambdas/contract/routes.js';
import { CountersignAuth } from '../../lib/auth.js';
import { synthesizeTestStack } from './synthesize-test-stack.js';

const EXTERNAL = {
  issuerUrl: 'https://login.example.com/realms/team',
  audience: ['countersign', 'inbox-app'],
};

interface RouteResource {
  Properties: { RouteKey: string; AuthorizationType?: string; AuthorizerId?: unknown };
}

function routesOf(template: Template): Record<string, RouteResource['Properties']> {
  const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')) as RouteResource[];
  return Object.fromEntries(routes.map((route) => [route.Properties.RouteKey, route.Properties]));
}

describe('authentication of the HTTP API', () => {
  it('puts the JWT authorizer on every route except the page shell, its library and GET /openapi.json', () => {
    // Prepare
    const { template } = synthesizeTestStack();

    // Act
    const routes = routesOf(template);

    // Assess
    // Without channels, a channel's route does not exist (test/infra/channels.test.ts has them).
    const manifest = ROUTES.filter((route) => transportOf(route) === 'http-api' && !('channel' in route));
    expect(Object.keys(routes).sort()).toEqual(manifest.map(routeKeyOf).sort());
    expect(manifest.filter((route) => route.auth === 'none').map(routeKeyOf)).toEqual([
      'GET /',
      'GET /inbox/runs/{id}',
      'GET /assets/oauth-client.js',
      'GET /openapi.json',
      'GET /runbook',
    ]);
    for (const route of manifest) {
      const properties = routes[routeKeyOf(route)];
      if (route.auth === 'none') {
        expect(properties?.AuthorizationType ?? 'NONE').toBe('NONE');
        expect(properties?.AuthorizerId).toBeUndefined();
      } else {
        expect(properties?.AuthorizationType, routeKeyOf(route)).toBe('JWT');
        expect(properties?.AuthorizerId, routeKeyOf(route)).toBeDefined();
      }
    }
  });

  it('creates a Cognito user pool with the three grant groups, MFA and no self sign-up by default', () => {
    // Prepare
    const { template } = synthesizeTestStack();

    // Act
    const groups = Object.values(template.findResources('AWS::Cognito::UserPoolGroup')).map(
      (group) => (group as { Properties: { GroupName: string } }).Properties.GroupName,
    );

    // Assess
    expect(groups.sort()).toEqual(['admin', 'agent_approve', 'agent_run']);
    template.resourceCountIs('AWS::Cognito::UserPool', 1);
    template.hasResourceProperties('AWS::Cognito::UserPool', {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      MfaConfiguration: 'ON',
      EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
      UserPoolTier: 'PLUS',
      Policies: { PasswordPolicy: Match.objectLike({ MinimumLength: 12, RequireSymbols: true }) },
    });
    template.hasResource('AWS::Cognito::UserPool', { DeletionPolicy: 'Retain' });
    template.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      GenerateSecret: false,
      PreventUserExistenceErrors: 'ENABLED',
      ExplicitAuthFlows: Match.arrayWith(['ALLOW_USER_SRP_AUTH']),
    });
  });

  it('makes the authorizer trust that user pool and its two app clients only (the CLI one and the page one)', () => {
    // Prepare
    const { template, stack, logicalIdOf } = synthesizeTestStack();
    const userPool = stack.countersign.auth.userPool;
    const client = stack.countersign.auth.userPoolClient;
    const pageClient = stack.countersign.auth.managedLogin?.client;
    if (!userPool || !client || !pageClient) throw new Error('no user pool');

    // Act
    const authorizers = template.findResources('AWS::ApiGatewayV2::Authorizer');

    // Assess
    expect(Object.keys(authorizers)).toHaveLength(1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: {
        Audience: [{ Ref: logicalIdOf(client) }, { Ref: logicalIdOf(pageClient) }],
        Issuer: {
          'Fn::Join': [
            '',
            Match.arrayWith([Match.stringLikeRegexp('cognito-idp'), { Ref: logicalIdOf(userPool) }]),
          ],
        },
      },
    });
  });

  it('uses an external OIDC issuer and audience instead, and creates no user pool', () => {
    // Prepare
    const { template, stack } = synthesizeTestStack({ countersign: { externalIdentityProvider: EXTERNAL } });

    // Act
    const routes = routesOf(template);

    // Assess
    template.resourceCountIs('AWS::Cognito::UserPool', 0);
    template.resourceCountIs('AWS::Cognito::UserPoolGroup', 0);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      JwtConfiguration: { Issuer: EXTERNAL.issuerUrl, Audience: EXTERNAL.audience },
    });
    expect(routes['POST /runs/{id}/decision']?.AuthorizationType).toBe('JWT');
    expect(routes['GET /']?.AuthorizationType ?? 'NONE').toBe('NONE');
    expect(stack.countersign.auth.userPool).toBeUndefined();
    expect(stack.countersign.auth.issuerUrl).toBe(EXTERNAL.issuerUrl);
  });

  it('lets the user pool follow the removal policy', () => {
    // Act
    const { template } = synthesizeTestStack({ countersign: { removalPolicy: RemovalPolicy.DESTROY } });

    // Assess
    template.hasResource('AWS::Cognito::UserPool', { DeletionPolicy: 'Delete' });
    template.hasResourceProperties('AWS::Cognito::UserPool', { DeletionProtection: 'INACTIVE' });
  });

  it.each([
    [{ issuerUrl: 'http://login.example.com', audience: ['a'] }, /not an https issuer URL/],
    [{ issuerUrl: 'not a url', audience: ['a'] }, /"not a url" is not an https issuer URL/],
    [{ issuerUrl: 'https://login.example.com?x=1', audience: ['a'] }, /not an https issuer URL/],
    [{ issuerUrl: 'https://login.example.com', audience: [] }, /must list between 1 and 50 audiences/],
    [{ issuerUrl: 'https://login.example.com', audience: ['ok', ' '] }, /contains " "; each audience/],
  ])('refuses the external identity provider %j', (externalIdentityProvider, message) => {
    // Act
    const synthesize = () => synthesizeTestStack({ countersign: { externalIdentityProvider } });

    // Assess
    expect(synthesize).toThrow(message);
  });

  it('leaves no unacknowledged cdk-nag finding with an external provider, and acknowledges APIG4 on the public routes only', () => {
    // Prepare
    const { app } = synthesizeTestStack({ countersign: { externalIdentityProvider: EXTERNAL } });
    const bare = new App();
    const bareStack = new Stack(bare, 'Bare');
    new CountersignAuth(bareStack, 'Auth', { inboxUrl: 'https://approvals.example.com/' });

    // Act
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const acknowledged = app.node
      .findAll()
      .filter((construct) =>
        construct.node.metadata.some(
          (entry) =>
            entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY &&
            Object.keys(entry.data as object).some((key) => key.endsWith('AwsSolutions-APIG4')),
        ),
      )
      .map((construct) => construct.node.path);
    const bareReport = new AwsSolutionsChecks(bare).validateScope(bare);

    // Assess
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
    expect(acknowledged.sort()).toEqual([
      'Countersign/Countersign/Api/HttpApi/GET--',
      'Countersign/Countersign/Api/HttpApi/GET--assets--oauth-client.js',
      'Countersign/Countersign/Api/HttpApi/GET--inbox--runs--{id}',
      'Countersign/Countersign/Api/HttpApi/GET--openapi.json',
      'Countersign/Countersign/Api/HttpApi/GET--runbook',
    ]);
    expect(bareReport.violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});
