import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import { HANDLER_NAMES, type HandlerName } from '../../lib/handler-names.js';
import {
  type PolicyStatementJson,
  type SynthesizedStack,
  synthesizeTestStack,
} from './synthesize-test-stack.js';

const QUOTA_COUNTERS = ['api-runs', 'api-generate', 'api-run-events', 'api-external'] as const;

describe('Countersign least privilege', () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthesizeTestStack();
  });

  const rolesOf = (...names: HandlerName[]): string[] => names.map((name) => synthesized.roleOf(name)).sort();

  it('grants bedrock:InvokeModel to model-turn and api-generate only, on the configured model', () => {
    // Act
    const roles = synthesized.rolesGranted('bedrock:InvokeModel');
    const statement = synthesized
      .statementsOf(synthesized.roleOf('model-turn'))
      .find((candidate) => candidate.Action === 'bedrock:InvokeModel');

    const countTokens = synthesized
      .statementsOf(synthesized.roleOf('model-turn'))
      .find((candidate) => candidate.Action === 'bedrock:CountTokens');

    // Assess
    expect(roles).toEqual(rolesOf('model-turn', 'api-generate'));
    expect(JSON.stringify(statement?.Resource)).toContain('anthropic.claude-sonnet-4-5-20250929-v1:0');
    expect(synthesized.rolesGranted('bedrock:CountTokens')).toEqual(rolesOf('model-turn', 'api-generate'));
    const generateStatement = synthesized
      .statementsOf(synthesized.roleOf('api-generate'))
      .find((candidate) => candidate.Action === 'bedrock:InvokeModel');
    expect(generateStatement?.Resource).toEqual(statement?.Resource);
    expect(JSON.stringify(countTokens?.Resource)).toContain(
      '::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0',
    );
    expect(JSON.stringify(countTokens?.Resource)).not.toContain('*');
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

  it('lets only the handlers that load or save run state touch overflow objects; cards never overflow', () => {
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
        'api-run-events',
        'api-external',
        'notify-caller',
        'record-external-decision',
      ),
    );
    expect(writers).toEqual(
      rolesOf('model-turn', 'execute-tools', 'record-rejection', 'api-runs', 'api-external'),
    );
  });

  it('queries the inbox index from the inbox and the waiting-runs probe only, the history index from the runs function only, and deletes outside quota partitions from admin only', () => {
    // Prepare
    const onIndex = (index: string) => (statement: PolicyStatementJson) =>
      JSON.stringify(statement.Resource).includes(`/index/${index}`);
    const statementsOf = (name: HandlerName) => synthesized.statementsOf(synthesized.roleOf(name));
    const readersOf = (index: string) =>
      HANDLER_NAMES.filter((name) => statementsOf(name).some(onIndex(index)));

    // Act
    const indexReaders = readersOf(TABLE_LAYOUT.inboxIndex.name);
    const historyReaders = readersOf(TABLE_LAYOUT.historyIndex.name);
    const historyStatements = statementsOf('api-runs').filter(onIndex(TABLE_LAYOUT.historyIndex.name));

    const readerUpdates = (['api-inbox', 'api-run-events'] as const).map((name) =>
      synthesized
        .statementsOf(synthesized.roleOf(name))
        .filter((statement) => [statement.Action].flat().includes('dynamodb:UpdateItem')),
    );

    // Assess
    expect(indexReaders).toEqual(['api-inbox', 'report-waiting-runs']);
    expect(historyReaders).toEqual(['api-runs']);
    expect(historyStatements.map((statement) => statement.Action)).toEqual(['dynamodb:Query']);
    // The inbox's and the stream's one write ends the run of a card that cannot be opened, on
    // run partitions only.
    for (const updates of readerUpdates) {
      expect(updates).toHaveLength(1);
      expect(updates[0]?.Condition).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*'] },
      });
    }
    expect(synthesized.rolesGranted('dynamodb:DeleteItem')).toEqual(
      rolesOf('api-admin', 'api-runs', 'api-run-events', 'api-external'),
    );
  });

  it('lets the functions that count quotas write quota partitions only, never another item', () => {
    // Act
    const quotaStatements = QUOTA_COUNTERS.map((name) => ({
      name,
      statements: synthesized
        .statementsOf(synthesized.roleOf(name))
        .filter((statement) => JSON.stringify(statement.Condition ?? {}).includes('QUOTA#')),
    }));
    const unconditionalWrites = (name: HandlerName) =>
      synthesized
        .statementsOf(synthesized.roleOf(name))
        .filter((statement) => statement.Condition === undefined)
        .flatMap((statement) => [statement.Action].flat())
        .filter((action) =>
          ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'].includes(action),
        );

    // Assess
    for (const { statements } of quotaStatements) {
      expect(statements).toHaveLength(1);
      expect(statements[0]?.Condition).toEqual({
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['QUOTA#*'] },
      });
    }
    expect(unconditionalWrites('api-generate')).toEqual([]);
    expect(unconditionalWrites('api-run-events')).toEqual([]);
    for (const name of ['api-runs', 'api-external'] as const)
      expect(unconditionalWrites(name)).not.toContain('dynamodb:DeleteItem');
  });

  it('grants secretsmanager:GetSecretValue to model-turn and api-generate only, and only with an OpenAI-compatible endpoint', () => {
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
    expect(endpointRoles).toEqual(
      [withEndpoint.roleOf('model-turn'), withEndpoint.roleOf('api-generate')].sort(),
    );
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

  it('lets only the steps that list and call MCP tools read the MCP server secrets', () => {
    // Prepare
    const withMcp = synthesizeTestStack({ mcpServerSecretNames: ['countersign/mcp/tickets'] });

    // Act
    const roles = withMcp.rolesGranted('secretsmanager:GetSecretValue');

    // Assess
    expect(roles).toEqual(
      [
        withMcp.roleOf('await-approval'),
        withMcp.roleOf('execute-tools'),
        withMcp.roleOf('model-turn'),
      ].sort(),
    );
  });
});
