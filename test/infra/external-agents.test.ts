import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EXTERNAL_RUNS_SCOPE } from '../../lambdas/contract/route-definition.js';
import { ROUTES } from '../../lambdas/contract/routes.js';
import { synthesizeTestStack } from './synthesize-test-stack.js';

type Resource = { Properties: Record<string, unknown> };

describe('agents that run elsewhere, as the synthesized template says', () => {
  const synthesized = synthesizeTestStack({
    countersign: { externalAgents: { clients: [{ name: 'billing-agent' }] } },
  });
  const { template, stack, logicalIdOf } = synthesized;

  it('keeps the user pool to one domain: the agents take their tokens where the inbox page signs in', () => {
    // Act
    const domains = Object.values(template.findResources('AWS::Cognito::UserPoolDomain'));

    // Assess: a user pool takes one Cognito domain; a second would fail the deployment
    expect(domains).toHaveLength(1);
    expect(stack.countersign.externalAgents?.domain).toBe(stack.countersign.auth.managedLogin?.domain);
  });

  it('gives each agent a client with the client-credentials grant and the one scope, and no way for a person to sign in', () => {
    // Act
    const clients = Object.values(template.findResources('AWS::Cognito::UserPoolClient')) as Resource[];
    const agent = clients.find((client) => client.Properties.ClientName === 'billing-agent');

    // Assess
    template.hasResourceProperties('AWS::Cognito::UserPoolResourceServer', {
      Identifier: EXTERNAL_RUNS_SCOPE.split('/')[0],
      Scopes: [Match.objectLike({ ScopeName: EXTERNAL_RUNS_SCOPE.split('/')[1] })],
    });
    expect(agent?.Properties).toMatchObject({
      GenerateSecret: true,
      AllowedOAuthFlows: ['client_credentials'],
      ExplicitAuthFlows: ['ALLOW_REFRESH_TOKEN_AUTH'],
    });
    expect(JSON.stringify(agent?.Properties.AllowedOAuthScopes)).toContain(
      `/${EXTERNAL_RUNS_SCOPE.split('/')[1]}`,
    );
    expect(agent?.Properties.AllowedOAuthScopes).toHaveLength(1);
    expect(agent?.Properties.CallbackURLs).toBeUndefined();
  });

  it('puts the machine routes behind an authorizer of the agents only, with the scope; every other route behind the people’s', () => {
    // Prepare
    const machineRoutes = ROUTES.filter((route) => route.auth === 'machine').map(
      (route) => `${route.method} ${route.path}`,
    );
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')) as Resource[];
    const authorizers = template.findResources('AWS::ApiGatewayV2::Authorizer') as Record<string, Resource>;
    const authorizerOf = (route: Resource) => {
      const reference = route.Properties.AuthorizerId as { Ref: string } | undefined;
      return reference ? authorizers[reference.Ref] : undefined;
    };

    // Act
    const machine = routes.filter((route) => machineRoutes.includes(route.Properties.RouteKey as string));
    const people = routes.filter(
      (route) =>
        !machineRoutes.includes(route.Properties.RouteKey as string) && route.Properties.AuthorizerId,
    );

    // Assess
    expect(machine.map((route) => route.Properties.RouteKey).sort()).toEqual([...machineRoutes].sort());
    const agentClient = stack.countersign.externalAgents?.clients['billing-agent'];
    if (!agentClient) throw new Error('no agent client');
    for (const route of machine) {
      expect(route.Properties.AuthorizationScopes).toEqual([EXTERNAL_RUNS_SCOPE]);
      expect(authorizerOf(route)?.Properties.JwtConfiguration).toMatchObject({
        Audience: [{ Ref: logicalIdOf(agentClient) }],
      });
    }
    for (const route of people) {
      const audience = (
        authorizerOf(route)?.Properties.JwtConfiguration as { Audience?: unknown[] } | undefined
      )?.Audience;
      expect(audience).not.toContainEqual({ Ref: logicalIdOf(agentClient) });
    }
  });

  it('lets NotifyCaller alone read the agent’s webhook secret', () => {
    // Prepare
    const secrets = Object.keys(template.findResources('AWS::SecretsManager::Secret'));
    const readers = Object.entries(stack.countersign.functions)
      .filter(([, handler]) => {
        if (!handler.role) return false;
        return synthesized.actionsOf(logicalIdOf(handler.role)).has('secretsmanager:GetSecretValue');
      })
      .map(([name]) => name);

    // Assess
    expect(secrets).toHaveLength(1);
    expect(readers).toEqual(['notify-caller']);
  });
});
