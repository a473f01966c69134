import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

describe('the run events endpoint (GET /runs/{id}/events, streamed)', () => {
  let synthesized: SynthesizedStack;

  beforeAll(() => {
    synthesized = synthesizeTestStack();
  });

  it('serves the api-run-events function through a function URL in RESPONSE_STREAM mode', () => {
    // Prepare
    const functionId = synthesized.logicalIdOf(synthesized.stack.countersign.functions['api-run-events']);

    // Assess
    synthesized.template.hasResourceProperties('AWS::Lambda::Url', {
      TargetFunctionArn: { 'Fn::GetAtt': [functionId, 'Arn'] },
      InvokeMode: 'RESPONSE_STREAM',
      AuthType: 'NONE',
      Cors: Match.objectLike({ AllowMethods: ['GET'], AllowHeaders: ['authorization'] }),
    });
    expect(Object.keys(synthesized.template.findResources('AWS::Lambda::Url'))).toHaveLength(1);
    synthesized.template.hasOutput('*', { Value: { 'Fn::GetAtt': [Match.anyValue(), 'FunctionUrl'] } });
  });

  it('tells the function the issuer and app clients of the HTTP API, and gives it 90 seconds', () => {
    // Prepare
    const countersign = synthesized.stack.countersign;
    const poolId = synthesized.logicalIdOf(countersign.auth.userPool ?? countersign);
    const clientId = synthesized.logicalIdOf(countersign.auth.userPoolClient ?? countersign);
    const pageClientId = synthesized.logicalIdOf(countersign.auth.managedLogin?.client ?? countersign);

    // Assess
    synthesized.template.hasResourceProperties('AWS::Lambda::Function', {
      Role: { 'Fn::GetAtt': [synthesized.roleOf('api-run-events'), 'Arn'] },
      Timeout: 90,
      Environment: {
        Variables: Match.objectLike({
          COUNTERSIGN_JWT_ISSUER: { 'Fn::GetAtt': [poolId, 'ProviderURL'] },
          COUNTERSIGN_JWT_AUDIENCE: { 'Fn::Join': ['', [{ Ref: clientId }, ',', { Ref: pageClientId }]] },
        }),
      },
    });
  });

  it('uses the external identity provider and its audiences when one is configured', () => {
    // Prepare
    const external = synthesizeTestStack({
      countersign: {
        externalIdentityProvider: {
          issuerUrl: 'https://login.example.com/realm',
          audience: ['app-a', 'app-b'],
        },
      },
    });

    // Assess
    external.template.hasResourceProperties('AWS::Lambda::Function', {
      Role: { 'Fn::GetAtt': [external.roleOf('api-run-events'), 'Arn'] },
      Environment: {
        Variables: Match.objectLike({
          COUNTERSIGN_JWT_ISSUER: 'https://login.example.com/realm',
          COUNTERSIGN_JWT_AUDIENCE: 'app-a,app-b',
        }),
      },
    });
  });

  it('reads, and writes only to end the run of a card that cannot be opened and to hold its stream slot under QUOTA#', () => {
    // Act
    const statements = synthesized.statementsOf(synthesized.roleOf('api-run-events'));
    const isQuotaOnly = (statement: { Condition?: unknown }) =>
      JSON.stringify(statement.Condition ?? {}).includes('"dynamodb:LeadingKeys":["QUOTA#*"]');
    const writesOf = (kept: typeof statements) =>
      kept
        .flatMap((statement) => [statement.Action].flat())
        .filter((action) => /^(dynamodb|s3):(Put|Update|Delete|BatchWrite)|^states:/.test(action))
        .sort();
    const actions = synthesized.actionsOf(synthesized.roleOf('api-run-events'));

    // Assess: the card reader's refusal marks the run failed (UpdateItem on RUN#* keys, asserted
    // with the inbox's in countersign-permissions-data.test.ts) and stops its execution by id; the
    // open-stream quota puts and deletes its slot, on QUOTA# partitions only. Nothing is sealed.
    expect(actions.has('dynamodb:GetItem')).toBe(true);
    expect(actions.has('kms:Decrypt')).toBe(true);
    expect(actions.has('s3:GetObject')).toBe(true);
    expect(writesOf(statements.filter((statement) => !isQuotaOnly(statement)))).toEqual([
      'dynamodb:UpdateItem',
      'states:StopExecution',
    ]);
    expect(writesOf(statements.filter(isQuotaOnly))).toEqual(['dynamodb:DeleteItem', 'dynamodb:PutItem']);
    const sealingKeyId = synthesized.logicalIdOf(synthesized.stack.countersign.sealingKey);
    const sealingActions = statements
      .filter((statement) => JSON.stringify(statement.Resource).includes(`"${sealingKeyId}"`))
      .flatMap((statement) => [statement.Action].flat());
    expect(sealingActions).toEqual(['kms:Decrypt']);
  });

  it('leaves no unacknowledged cdk-nag finding on the endpoint', () => {
    // Act
    const report = new AwsSolutionsChecks(synthesized.app).validateScope(synthesized.app);
    const findings = report.violations.filter((violation) =>
      violation.violatingResources.some((resource) =>
        /Events|ApiRunEvents/.test(resource.constructPath ?? ''),
      ),
    );

    // Assess
    expect(findings.map((violation) => violation.ruleName)).toEqual([]);
  });
});
