import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../lambdas/contract/routes.js';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import { CARD_CLOSING_HANDLERS } from '../../lib/countersign-functions.js';
import { HANDLER_NAMES, type HandlerName } from '../../lib/handler-names.js';
import {
  type PolicyStatementJson,
  type SynthesizedStack,
  synthesizeTestStack,
} from './synthesize-test-stack.js';

const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const XRAY = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'];
const DATA_KEY_READ = ['kms:Decrypt', 'kms:DescribeKey'];
const DATA_KEY_WRITE = [...DATA_KEY_READ, 'kms:Encrypt', 'kms:GenerateDataKey'];
const BASE = [...LOGS, ...XRAY];
/** A run's receipt chain (issue #25): read with a Query, appended with a conditional put. */
const RECEIPT_CHAIN = ['dynamodb:Query', 'dynamodb:PutItem'];
/** Reading, adding and updating runs, cards and decisions, and reading their sealed blobs. */
const RECORDS_READ_WRITE = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  's3:GetObject',
];

/**
 * Every action of every handler role, from what each handler's composition calls (see the
 * comment on HANDLER_DATA_PERMISSIONS). The sealing key's kms:GenerateDataKey and kms:Decrypt
 * fold into the data key's names here; which key each is on is the keys test's business.
 */
const EXPECTED_ACTIONS: Record<HandlerName, readonly string[]> = {
  // The receipt entry of a cancel it finishes (its request failed half-way): the chain and a put.
  prepare: [...BASE, ...RECEIPT_CHAIN, 'dynamodb:GetItem', 'dynamodb:UpdateItem', ...DATA_KEY_WRITE],
  'model-turn': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    's3:GetObject',
    's3:PutObject',
    ...DATA_KEY_WRITE,
    'bedrock:InvokeModel',
    // The context-window manager's own token count (issue #12), on the foundation model.
    'bedrock:CountTokens',
  ],
  // It also arms a card's escalation steps: schedules in countersign's group, with its invoke role.
  'await-approval': [
    ...BASE,
    ...RECORDS_READ_WRITE,
    ...DATA_KEY_WRITE,
    'events:PutEvents',
    'scheduler:CreateSchedule',
    'iam:PassRole',
  ],
  'execute-tools': [...BASE, ...RECORDS_READ_WRITE, 's3:PutObject', ...DATA_KEY_WRITE, 'events:PutEvents'],
  'record-rejection': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    's3:GetObject',
    's3:PutObject',
    ...DATA_KEY_WRITE,
  ],
  'finish-run': [...BASE, 'dynamodb:UpdateItem', ...DATA_KEY_WRITE],
  'mark-failed': [...BASE, 'dynamodb:UpdateItem', ...DATA_KEY_WRITE, 'events:PutEvents'],
  // The expiry's receipt entry: the run's turn (GetItem), then the chain and a conditional put.
  'mark-expired': [
    ...BASE,
    ...RECEIPT_CHAIN,
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    ...DATA_KEY_WRITE,
    'events:PutEvents',
  ],
  // Forgetting a started run that ended (DeleteItem) on quota partitions only.
  'api-runs': [
    ...BASE,
    ...RECORDS_READ_WRITE,
    'dynamodb:DeleteItem',
    's3:PutObject',
    ...DATA_KEY_WRITE,
    'states:StartExecution',
    'states:StopExecution',
    'events:PutEvents',
  ],
  // The one write: ending the run of a card that cannot be opened (UpdateItem on RUN#* keys only).
  'api-inbox': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:UpdateItem',
    ...DATA_KEY_READ,
    'states:StopExecution',
    'events:PutEvents',
  ],
  'api-decision': [
    ...BASE,
    'dynamodb:GetItem',
    // The run's receipt chain, read before an entry is appended.
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    ...DATA_KEY_WRITE,
    'kms:Sign',
    'states:SendTaskSuccess',
    'states:SendTaskFailure',
    'states:StopExecution',
    'events:PutEvents',
  ],
  'api-admin': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    ...DATA_KEY_WRITE,
  ],
  // Completion and translation: reads the user, the configuration and its skills; calls the
  // model; counts the completion (UpdateItem on quota partitions only).
  'api-generate': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:UpdateItem',
    ...DATA_KEY_WRITE,
    'bedrock:InvokeModel',
    'bedrock:CountTokens',
  ],
  // Reads; its writes end the run of a card that cannot be opened (RUN#* only, as the inbox's) and
  // take and free its stream slot (QUOTA#* only).
  'api-run-events': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:UpdateItem',
    'dynamodb:PutItem',
    'dynamodb:DeleteItem',
    's3:GetObject',
    ...DATA_KEY_WRITE,
    'states:StopExecution',
    'events:PutEvents',
  ],
  // Redelivers claimed decisions whose request failed: reads the card, opens its token, closes it
  // (and announces the closing).
  'report-waiting-runs': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:UpdateItem',
    ...DATA_KEY_WRITE,
    'states:SendTaskSuccess',
    'states:SendTaskFailure',
    'states:StopExecution',
    'events:PutEvents',
  ],
  // A card's escalation step: reads the card, writes its routing and index entries, announces it.
  'escalate-card': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    ...DATA_KEY_WRITE,
    'events:PutEvents',
  ],
  'api-external': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    's3:GetObject',
    's3:PutObject',
    ...DATA_KEY_WRITE,
    'states:StartExecution',
  ],
  'record-external-decision': [
    ...BASE,
    'dynamodb:GetItem',
    'dynamodb:UpdateItem',
    's3:GetObject',
    ...DATA_KEY_WRITE,
    'events:PutEvents',
  ],
  // No machine client here, so no webhook secret (external-agents-permissions.test.ts).
  'notify-caller': [...BASE, 'dynamodb:GetItem', 'dynamodb:Query', 's3:GetObject', ...DATA_KEY_READ],
};

const QUOTA_COUNTERS = ['api-runs', 'api-generate', 'api-run-events', 'api-external'] as const;
const EVENT_PUTTERS = [...CARD_CLOSING_HANDLERS, 'escalate-card', 'record-external-decision'] as const;
describe('Countersign least privilege', () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthesizeTestStack();
  });

  const rolesOf = (...names: HandlerName[]): string[] => names.map((name) => synthesized.roleOf(name)).sort();

  it('grants SendTaskSuccess and SendTaskFailure to api-decision and the redelivering probe only', () => {
    // Prepare
    const expected = rolesOf('api-decision', 'report-waiting-runs');

    // Act
    const successRoles = synthesized.rolesGranted('states:SendTaskSuccess');
    const failureRoles = synthesized.rolesGranted('states:SendTaskFailure');

    // Assess
    expect(successRoles).toEqual(expected);
    expect(failureRoles).toEqual(expected);
    expect(synthesized.rolesGranted('states:SendTaskHeartbeat')).toEqual([]);
  });

  it('grants StartExecution to api-runs, api-external and to the state machine itself only', () => {
    // Prepare
    const expected = [...rolesOf('api-runs', 'api-external'), synthesized.stateMachineRole()].sort();

    // Act
    const roles = synthesized.rolesGranted('states:StartExecution');

    // Assess
    expect(roles).toEqual(expected);
  });

  it('redrives through StartExecution of the run’s own state machine: no role may RedriveExecution or start elsewhere', () => {
    // Prepare: POST /runs/{id}/redrive is served by api-runs, which starts `<run id>-redrive-<n>`
    const redriveRoute = ROUTES.find((route) => route.operationId === 'redriveRun');
    const statement = synthesized
      .statementsOf(synthesized.roleOf('api-runs'))
      .find((candidate) => candidate.Action === 'states:StartExecution');

    // Act
    const redriving = ['states:RedriveExecution', 'states:StartSyncExecution', 'states:*'].flatMap((action) =>
      synthesized.rolesGranted(action),
    );

    // Assess
    expect(redriveRoute?.function).toBe('api-runs');
    expect(redriving).toEqual([]);
    expect(statement?.Resource).toEqual({
      Ref: synthesized.logicalIdOf(synthesized.stack.countersign.stateMachine),
    });
  });

  it('grants StopExecution to api-runs, the card readers and the probe only, on the executions of its own state machine', () => {
    // Act
    const roles = synthesized.rolesGranted('states:StopExecution');
    const statements = (
      ['api-runs', 'api-inbox', 'api-decision', 'api-run-events', 'report-waiting-runs'] as const
    ).map((name) =>
      synthesized
        .statementsOf(synthesized.roleOf(name))
        .find((candidate) => candidate.Action === 'states:StopExecution'),
    );

    // Assess: POST /runs/{id}/cancel, and ending the run of a card that cannot be opened (issue #9)
    expect(roles).toEqual(
      rolesOf('api-runs', 'api-inbox', 'api-decision', 'api-run-events', 'report-waiting-runs'),
    );
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

  it('grants events:PutEvents to the handlers that pause a run, close a card, escalate a card or answer an external run only, and tells them the default bus', () => {
    // Act
    const roles = synthesized.rolesGranted('events:PutEvents');

    // Assess: `Run Awaiting Approval` from the pause, `Card Closed` from wherever a card closes,
    // `External Run Answered` from record-external-decision
    expect(roles).toEqual(rolesOf(...EVENT_PUTTERS));
    for (const name of EVENT_PUTTERS) {
      synthesized.template.hasResourceProperties('AWS::Lambda::Function', {
        Role: { 'Fn::GetAtt': [synthesized.roleOf(name), 'Arn'] },
        Environment: { Variables: Match.objectLike({ COUNTERSIGN_EVENT_BUS_NAME: 'default' }) },
      });
    }
    const buses = synthesized
      .statementsOf(synthesized.roleOf('api-decision'))
      .filter((statement) => [statement.Action].flat().includes('events:PutEvents'));
    expect(JSON.stringify(buses.map((statement) => statement.Resource))).toContain(':event-bus/default');
  });

  it('lets the pausing function arm escalations in its own schedule group only, passing the one role that may invoke escalate-card', () => {
    // Prepare
    const groups = Object.values(synthesized.template.findResources('AWS::Scheduler::ScheduleGroup')).map(
      (group) => String((group as { Properties: { Name?: unknown } }).Properties.Name),
    );
    const invokeRoles = Object.entries(synthesized.template.findResources('AWS::IAM::Role')).filter(
      ([, role]) =>
        JSON.stringify((role as { Properties: unknown }).Properties).includes('scheduler.amazonaws.com'),
    );

    // Act
    const creators = synthesized.rolesGranted('scheduler:CreateSchedule');
    const passers = synthesized.rolesGranted('iam:PassRole');
    const [createStatement] = synthesized
      .statementsOf(synthesized.roleOf('await-approval'))
      .filter((statement) => [statement.Action].flat().includes('scheduler:CreateSchedule'));
    const [passStatement] = synthesized
      .statementsOf(synthesized.roleOf('await-approval'))
      .filter((statement) => [statement.Action].flat().includes('iam:PassRole'));
    const [invokeRoleId] = invokeRoles.map(([id]) => id);
    const invokeActions = synthesized.actionsOf(invokeRoleId ?? '');
    const invokeResources = JSON.stringify(
      synthesized.statementsOf(invokeRoleId ?? '').map((statement) => statement.Resource),
    );

    // Assess
    expect(groups).toHaveLength(1);
    expect(creators).toEqual(rolesOf('await-approval'));
    expect(passers).toEqual(rolesOf('await-approval'));
    expect(JSON.stringify(createStatement?.Resource)).toContain(`:schedule/${groups[0]}/*`);
    expect(passStatement?.Resource).toEqual({ 'Fn::GetAtt': [invokeRoleId, 'Arn'] });
    expect(invokeRoles).toHaveLength(1);
    expect([...invokeActions]).toEqual(['lambda:InvokeFunction']);
    expect(invokeResources).toContain(
      synthesized.logicalIdOf(synthesized.stack.countersign.functions['escalate-card']),
    );
    expect(invokeResources).not.toContain(
      synthesized.logicalIdOf(synthesized.stack.countersign.functions['await-approval']),
    );
    synthesized.template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: [Match.objectLike({ Principal: { Service: 'scheduler.amazonaws.com' } })],
      }),
    });
  });

  it('grants each role exactly the actions its handler calls, and nothing else', () => {
    // Act
    const granted = Object.fromEntries(
      HANDLER_NAMES.map((name) => [name, [...synthesized.actionsOf(synthesized.roleOf(name))].sort()]),
    );

    // Assess: written out, not derived from lib/handler-permissions.ts, so widening it fails here
    expect(granted).toEqual(
      Object.fromEntries(HANDLER_NAMES.map((name) => [name, [...EXPECTED_ACTIONS[name]].sort()])),
    );
    for (const name of HANDLER_NAMES) {
      expect(granted[name], name).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/^dynamodb:(Scan|BatchWriteItem|DescribeTable)$/)]),
      );
    }
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

  it('keeps nothing outside the log group, table, keys, bucket and state machine on a wildcard', () => {
    // Act
    const wildcardResources = HANDLER_NAMES.flatMap((name) =>
      synthesized
        .statementsOf(synthesized.roleOf(name))
        .filter((statement) => statement.Resource === '*')
        .flatMap((statement) => [statement.Action].flat()),
    );

    // Assess
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
