import { Stack } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { describe, expect, it } from 'vitest';
import { inboxSignInSchema } from '../../lambdas/contract/inbox-sign-in.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

/**
 * A CloudFormation value as a string, each reference drawn as `<Ref>` or `<Resource.Attribute>`,
 * so a test reads a JSON variable the construct joined from tokens.
 */
function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  const object = value as Record<string, unknown>;
  if ('Ref' in object) return `<${String(object.Ref)}>`;
  if ('Fn::GetAtt' in object) return `<${(object['Fn::GetAtt'] as string[]).join('.')}>`;
  if ('Fn::Join' in object) {
    const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
    return parts.map(flatten).join(separator);
  }
  throw new Error(`Cannot flatten ${JSON.stringify(value)}`);
}

function environmentOf(synthesized: SynthesizedStack, name: 'api-inbox' | 'await-approval') {
  const functionId = synthesized.logicalIdOf(synthesized.stack.countersign.functions[name]);
  const resource = synthesized.template.toJSON().Resources[functionId];
  return resource.Properties.Environment.Variables as Record<string, unknown>;
}

function pageClientOf(template: Template) {
  const clients = Object.values(template.findResources('AWS::Cognito::UserPoolClient')) as Array<{
    Properties: Record<string, unknown>;
  }>;
  return clients
    .map((client) => client.Properties)
    .find((client) => client.AllowedOAuthFlowsUserPoolClient === true);
}

describe('the inbox page signs in on managed login, as the synthesized template says', () => {
  it('creates the managed login domain, the page client (code flow, no secret, its own URL) and the page settings that name them', () => {
    // Prepare
    const synthesized = synthesizeTestStack();
    const { template, stack, logicalIdOf } = synthesized;
    const managedLogin = stack.countersign.auth.managedLogin;
    const userPool = stack.countersign.auth.userPool;
    if (!managedLogin || !userPool) throw new Error('no managed login');
    const api = `<${logicalIdOf(stack.countersign.httpApi)}>`;
    const pageUrl = `https://${api}.execute-api.<AWS::Region>.<AWS::URLSuffix>/`;
    const domain = `<${logicalIdOf(managedLogin.domain)}>`;
    const client = `<${logicalIdOf(managedLogin.client)}>`;

    // Act
    const settings = JSON.parse(flatten(environmentOf(synthesized, 'api-inbox').COUNTERSIGN_INBOX_SIGN_IN));
    const pageClient = pageClientOf(template);

    // Assess: the domain (a prefix unique to the stack, managed login rather than the classic UI)...
    template.hasResourceProperties('AWS::Cognito::UserPoolDomain', {
      Domain: {
        'Fn::Join': [
          '',
          ['countersign-', { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] }],
        ],
      },
      ManagedLoginVersion: 2,
    });
    template.hasResourceProperties('AWS::Cognito::ManagedLoginBranding', {
      ClientId: { Ref: logicalIdOf(managedLogin.client) },
      UseCognitoProvidedValues: true,
    });
    // ...the page's client: public, the code flow only, back to the page's own URL...
    expect(pageClient).toMatchObject({
      GenerateSecret: false,
      AllowedOAuthFlows: ['code'],
      AllowedOAuthScopes: ['openid', 'email', 'profile'],
      SupportedIdentityProviders: ['COGNITO'],
      EnableTokenRevocation: true,
      ExplicitAuthFlows: ['ALLOW_USER_SRP_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
    });
    expect(((pageClient?.CallbackURLs ?? []) as unknown[]).map(flatten)).toEqual([pageUrl]);
    expect(((pageClient?.LogoutURLs ?? []) as unknown[]).map(flatten)).toEqual([pageUrl]);
    // ...and what the page signs in with names exactly those.
    expect(settings).toEqual({
      issuer: `<${logicalIdOf(userPool)}.ProviderURL>`,
      clientId: client,
      scopes: ['openid', 'email', 'profile'],
      redirectUri: pageUrl,
      signOutUrl: `https://${domain}.auth.<AWS::Region>.amazoncognito.com/logout?client_id=${client}&logout_uri=${pageUrl}`,
      connectOrigins: [
        'https://cognito-idp.<AWS::Region>.<AWS::URLSuffix>',
        `https://${domain}.auth.<AWS::Region>.amazoncognito.com`,
      ],
    });
    // The waiting card's event links under the page.
    expect(flatten(environmentOf(synthesized, 'await-approval').COUNTERSIGN_INBOX_URL)).toBe(pageUrl);
  });

  it('reads what a Lambda would: the settings parse with the page’s schema once deployed values fill the tokens', () => {
    // Prepare
    const synthesized = synthesizeTestStack();
    const deployed = flatten(environmentOf(synthesized, 'api-inbox').COUNTERSIGN_INBOX_SIGN_IN)
      .replaceAll(/<AWS::Region>/g, 'eu-west-1')
      .replaceAll(/<AWS::URLSuffix>/g, 'amazonaws.com')
      .replaceAll(/<[A-Za-z0-9]+\.ProviderURL>/g, 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc')
      .replaceAll(/<[A-Za-z0-9]+>/g, 'abc123');

    // Act
    const parsed = inboxSignInSchema.safeParse(JSON.parse(deployed));

    // Assess
    expect(parsed.success).toBe(true);
  });

  it('takes a chosen prefix, a custom domain, the page on your own domain and other scopes', () => {
    // Prepare
    const stackWith = (inboxSignIn: object, inboxUrl?: string) =>
      synthesizeTestStack({ countersign: { inboxSignIn, ...(inboxUrl ? { inboxUrl } : {}) } });

    // Act
    const prefixed = stackWith(
      { domainPrefix: 'acme-approvals', scopes: ['openid', 'email'] },
      'https://approvals.acme.test/',
    );
    const certificate = Certificate.fromCertificateArn(
      new Stack(),
      'Certificate',
      'arn:aws:acm:us-east-1:111122223333:certificate/abc',
    );
    const customDomain = stackWith({ customDomain: { domainName: 'login.acme.test', certificate } });

    // Assess
    prefixed.template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { Domain: 'acme-approvals' });
    expect(pageClientOf(prefixed.template)).toMatchObject({
      AllowedOAuthScopes: ['openid', 'email'],
      CallbackURLs: ['https://approvals.acme.test/'],
      LogoutURLs: ['https://approvals.acme.test/'],
    });
    expect(flatten(environmentOf(prefixed, 'await-approval').COUNTERSIGN_INBOX_URL)).toBe(
      'https://approvals.acme.test/',
    );
    customDomain.template.hasResourceProperties('AWS::Cognito::UserPoolDomain', {
      Domain: 'login.acme.test',
      CustomDomainConfig: { CertificateArn: Match.anyValue() },
    });
  });

  it('signs the page in at an external provider when its page client is given, and offers a pasted token only when not', () => {
    // Prepare
    const external = { issuerUrl: 'https://login.example.com/realms/team', audience: ['countersign'] };

    // Act
    const withClient = synthesizeTestStack({
      countersign: {
        externalIdentityProvider: external,
        inboxSignIn: { clientId: 'countersign-inbox', signOutUrl: 'https://login.example.com/logout' },
      },
    });
    const without = synthesizeTestStack({ countersign: { externalIdentityProvider: external } });
    const settings = JSON.parse(flatten(environmentOf(withClient, 'api-inbox').COUNTERSIGN_INBOX_SIGN_IN));

    // Assess
    expect(settings).toMatchObject({
      issuer: external.issuerUrl,
      clientId: 'countersign-inbox',
      scopes: ['openid', 'email', 'profile'],
      signOutUrl: 'https://login.example.com/logout',
      connectOrigins: ['https://login.example.com'],
    });
    expect(environmentOf(without, 'api-inbox').COUNTERSIGN_INBOX_SIGN_IN).toBeUndefined();
    without.template.resourceCountIs('AWS::Cognito::UserPoolDomain', 0);
  });

  it.each([
    [{ domainPrefix: 'Has Capitals' }, undefined, 'is not a Cognito domain prefix'],
    [{ domainPrefix: 'my-aws-login' }, undefined, 'is not a Cognito domain prefix'],
    [{ scopes: ['email'] }, undefined, 'must include "openid"'],
    [{ clientId: 'x' }, undefined, 'inboxSignIn.clientId is for an externalIdentityProvider'],
    [{}, 'http://approvals.example.com/', 'is not the page\'s https URL ending in "/"'],
    [{}, 'https://approvals.example.com', 'is not the page\'s https URL ending in "/"'],
  ])('refuses %j with the page at %s', (inboxSignIn, inboxUrl, message) => {
    // Act
    const synthesize = () =>
      synthesizeTestStack({ countersign: { inboxSignIn, ...(inboxUrl ? { inboxUrl } : {}) } });

    // Assess
    expect(synthesize).toThrow(message);
  });
});
