import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { HANDLER_NAMES, type HandlerName } from '../../lib/functions.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

describe('Countersign least privilege', () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthesizeTestStack();
  });

  const rolesOf = (...names: HandlerName[]): string[] => names.map((name) => synthesized.roleOf(name)).sort();

  it('grants SendTaskSuccess and SendTaskFailure to api-decision only', () => {
    // Prepare
    const expected = rolesOf('api-decision');

    // Act
    const successRoles = synthesized.rolesGranted('states:SendTaskSuccess');
    const failureRoles = synthesized.rolesGranted('states:SendTaskFailure');

    // Assess
    expect(successRoles).toEqual(expected);
    expect(failureRoles).toEqual(expected);
    expect(synthesized.rolesGranted('states:SendTaskHeartbeat')).toEqual([]);
  });

  it('grants StartExecution to api-runs and to the state machine itself only', () => {
    // Prepare
    const expected = [...rolesOf('api-runs'), synthesized.stateMachineRole()].sort();

    // Act
    const roles = synthesized.rolesGranted('states:StartExecution');

    // Assess
    expect(roles).toEqual(expected);
  });

  it('grants StopExecution to api-runs, api-inbox and api-decision only, on the executions of its own state machine', () => {
    // Act
    const roles = synthesized.rolesGranted('states:StopExecution');
    const statements = (['api-runs', 'api-inbox', 'api-decision'] as const).map((name) =>
      synthesized
        .statementsOf(synthesized.roleOf(name))
        .find((candidate) => candidate.Action === 'states:StopExecution'),
    );

    // Assess: POST /runs/{id}/cancel, and ending the run of a card that cannot be opened (issue #9)
    expect(roles).toEqual(rolesOf('api-runs', 'api-inbox', 'api-decision'));
    for (const statement of statements) {
      const resource = JSON.stringify(statement?.Resource);
      expect(resource).toContain(':execution:');
      expect(resource).toMatch(
        /:execution:",\{"Fn::GetAtt":\["CountersignWorkflowStateMachine\w+","Name"\]\},":\*"\]\]\}$/,
      );
    }
  });

  it('scopes the state machine StartExecution to its own name, without a reference cycle', () => {
    // Prepare
    const [stateMachine] = Object.values(
      synthesized.template.findResources('AWS::StepFunctions::StateMachine'),
    );
    const stateMachineName = (stateMachine as { Properties: { StateMachineName: string } }).Properties
      .StateMachineName;
    const statements = synthesized.statementsOf(synthesized.stateMachineRole());

    // Act
    const startStatement = statements.find((statement) => statement.Action === 'states:StartExecution');

    // Assess
    expect(JSON.stringify(startStatement?.Resource)).toContain(`:stateMachine:${stateMachineName}"`);
    expect(JSON.stringify(startStatement?.Resource)).not.toContain('Ref":"CountersignWorkflowStateMachine');
  });

  it('grants bedrock:InvokeModel to model-turn only, on the configured model', () => {
    // Act
    const roles = synthesized.rolesGranted('bedrock:InvokeModel');
    const statement = synthesized
      .statementsOf(synthesized.roleOf('model-turn'))
      .find((candidate) => candidate.Action === 'bedrock:InvokeModel');

    // Assess
    expect(roles).toEqual(rolesOf('model-turn'));
    expect(JSON.stringify(statement?.Resource)).toContain('anthropic.claude-sonnet-4-5-20250929-v1:0');
  });

  it('grants a foundation model in the stack Region only, without a wildcard', () => {
    // Prepare
    const foundationModel = synthesizeTestStack({
      countersign: { bedrockModelId: 'anthropic.claude-3-5-haiku-20241022-v1:0' },
    });

    // Act
    const statement = foundationModel
      .statementsOf(foundationModel.roleOf('model-turn'))
      .find((candidate) => candidate.Action === 'bedrock:InvokeModel');

    // Assess
    expect(statement?.Resource).toEqual({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':bedrock:',
          { Ref: 'AWS::Region' },
          '::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0',
        ],
      ],
    });
  });

  it('grants events:PutEvents to await-approval only and tells it the default bus', () => {
    // Act
    const roles = synthesized.rolesGranted('events:PutEvents');

    // Assess
    expect(roles).toEqual(rolesOf('await-approval'));
    synthesized.template.hasResourceProperties('AWS::Lambda::Function', {
      Role: { 'Fn::GetAtt': [synthesized.roleOf('await-approval'), 'Arn'] },
      Environment: { Variables: Match.objectLike({ COUNTERSIGN_EVENT_BUS_NAME: 'default' }) },
    });
  });

  it('lets only the turn, suspension and card handlers touch overflow objects, writers being the run steps', () => {
    // Act
    const readers = synthesized.rolesGranted('s3:GetObject');
    const writers = synthesized.rolesGranted('s3:PutObject');

    // Assess
    expect(readers).toEqual(
      rolesOf(
        'model-turn',
        'await-approval',
        'execute-tools',
        'record-rejection',
        'api-runs',
        'api-decision',
        'api-inbox',
        'api-run-events',
      ),
    );
    expect(writers).toEqual(rolesOf('model-turn', 'await-approval', 'execute-tools', 'record-rejection'));
  });

  it('gives api-inbox read-only table access and every other handler read-write', () => {
    // Act
    const inboxActions = synthesized.actionsOf(synthesized.roleOf('api-inbox'));
    const writers = synthesized.rolesGranted('dynamodb:PutItem');
    const inboxUpdates = synthesized
      .statementsOf(synthesized.roleOf('api-inbox'))
      .filter((statement) => [statement.Action].flat().includes('dynamodb:UpdateItem'));

    // Assess
    expect(inboxActions.has('dynamodb:Query')).toBe(true);
    // The one write: ending the run of a card that cannot be opened, on run partitions only.
    expect(
      [...inboxActions].filter((action) => /^(dynamodb|s3):(Put|Update|Delete|BatchWrite)/.test(action)),
    ).toEqual(['dynamodb:UpdateItem']);
    expect(inboxUpdates).toHaveLength(1);
    expect(inboxUpdates[0]?.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*'] },
    });
    expect(inboxActions.has('kms:Encrypt')).toBe(false);
    // api-run-events only reads too (it streams a run's events); its own test is events-endpoint.test.ts.
    const readOnly: readonly string[] = ['api-inbox', 'api-run-events', 'report-waiting-runs'];
    expect(writers).toEqual(rolesOf(...HANDLER_NAMES.filter((name) => !readOnly.includes(name))));
  });

  it('grants every handler the sealing key and nothing outside the table, key and bucket by wildcard', () => {
    // Act
    const decryptors = synthesized.rolesGranted('kms:Decrypt');
    const wildcardResources = HANDLER_NAMES.flatMap((name) =>
      synthesized
        .statementsOf(synthesized.roleOf(name))
        .filter((statement) => statement.Resource === '*')
        .flatMap((statement) => [statement.Action].flat()),
    );

    // Assess
    expect(decryptors).toEqual(rolesOf(...HANDLER_NAMES));
    expect(new Set(wildcardResources)).toEqual(
      new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']),
    );
  });

  it('attaches no AWS managed policy to any handler role', () => {
    // Act
    const roles = synthesized.template.findResources('AWS::IAM::Role');

    // Assess
    for (const role of Object.values(roles)) {
      expect((role as { Properties: Record<string, unknown> }).Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('grants secretsmanager:GetSecretValue to model-turn only, and only with an OpenAI-compatible endpoint', () => {
    // Prepare
    const withEndpoint = synthesizeTestStack({
      countersign: { modelProvider: 'openai-compatible' },
      openAiCompatible: { baseUrl: 'https://models.example.com/v1', apiKeySecretName: 'countersign/openai' },
    });

    // Act
    const defaultRoles = synthesized.rolesGranted('secretsmanager:GetSecretValue');
    const endpointRoles = withEndpoint.rolesGranted('secretsmanager:GetSecretValue');

    // Assess
    expect(defaultRoles).toEqual([]);
    expect(endpointRoles).toEqual([withEndpoint.roleOf('model-turn')]);
    expect(withEndpoint.rolesGranted('bedrock:InvokeModel')).toEqual([]);
    withEndpoint.template.hasResourceProperties('AWS::Lambda::Function', {
      Role: { 'Fn::GetAtt': [withEndpoint.roleOf('model-turn'), 'Arn'] },
      Environment: {
        Variables: Match.objectLike({
          COUNTERSIGN_MODEL_PROVIDER: 'openai-compatible',
          COUNTERSIGN_OPENAI_BASE_URL: 'https://models.example.com/v1',
          COUNTERSIGN_OPENAI_SECRET_ARN: Match.anyValue(),
        }),
      },
    });
  });
});
