import { Validations } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { synthesizeTestStack } from './synthesize-test-stack.js';

describe('cdk-nag AWS Solutions checks', () => {
  it('leaves no unacknowledged finding on the stack', () => {
    // Prepare
    const { app } = synthesizeTestStack();

    // Act
    const report = new AwsSolutionsChecks(app).validateScope(app);
    const findings = report.violations.map(
      (violation) =>
        `${violation.ruleName} at ${violation.violatingResources.map((resource) => resource.constructPath).join(', ')}`,
    );

    // Assess
    expect(findings).toEqual([]);
    expect(report.success).toBe(true);
  });

  it.each([
    [
      'a foundation model id',
      { countersign: { bedrockModelId: 'anthropic.claude-3-5-haiku-20241022-v1:0' } },
    ],
    [
      'an OpenAI-compatible endpoint',
      {
        countersign: { modelProvider: 'openai-compatible' as const },
        openAiCompatible: {
          baseUrl: 'https://models.example.com/v1',
          apiKeySecretName: 'countersign/openai',
        },
      },
    ],
    [
      'the Slack and email channels',
      {
        slack: {
          signingSecretName: 'countersign/slack-signing-secret',
          botTokenSecretName: 'countersign/slack-bot-token',
          routes: [{ channelId: 'C0123456789' }],
        },
        email: { identityName: 'example.com', fromAddress: 'countersign@example.com' },
      },
    ],
  ])('leaves no unacknowledged finding with %s', (_variant, props) => {
    // Prepare
    const { app } = synthesizeTestStack(props);

    // Act
    const report = new AwsSolutionsChecks(app).validateScope(app);

    // Assess
    expect(
      report.violations.map(
        (violation) =>
          `${violation.ruleName} at ${violation.violatingResources.map((resource) => resource.constructPath).join(', ')}`,
      ),
    ).toEqual([]);
  });

  it('still reports a finding nobody acknowledged (the check is live)', () => {
    // Prepare
    const { app, stack } = synthesizeTestStack();
    new Bucket(stack, 'UncheckedBucket');

    // Act
    const report = new AwsSolutionsChecks(app).validateScope(app);

    // Assess
    expect(report.violations.map((violation) => violation.ruleName)).toEqual(
      expect.arrayContaining(['AwsSolutions-S1', 'AwsSolutions-S10']),
    );
  });

  it('gives every acknowledgement a reason', () => {
    // Prepare
    const { stack } = synthesizeTestStack();

    // Act
    const acknowledgements = stack.node
      .findAll()
      .flatMap((construct) => construct.node.metadata)
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.values(entry.data as Record<string, string>));

    // Assess
    expect(acknowledgements.length).toBeGreaterThan(0);
    for (const reason of acknowledgements) expect(reason.length).toBeGreaterThan(40);
  });
});
