import { beforeAll, describe, expect, it } from 'vitest';
import { HANDLER_NAMES, type HandlerName } from '../../lib/handler-names.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const XRAY = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'];
const DATA_KEY_READ = ['kms:Decrypt', 'kms:DescribeKey'];
const DATA_KEY_WRITE = [...DATA_KEY_READ, 'kms:Encrypt', 'kms:GenerateDataKey'];
const BASE = [...LOGS, ...XRAY];
/** A run's receipt chain (issue #25): read with a Query, appended with a conditional put. */
const RECEIPT_CHAIN = ['dynamodb:Query', 'dynamodb:PutItem'];
/** Reading a run and writing its state back, the sealed state's overflow object included. */
const RUN_STATE_READ_WRITE = ['dynamodb:GetItem', 'dynamodb:UpdateItem', 's3:GetObject', 's3:PutObject'];
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
    ...RUN_STATE_READ_WRITE,
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
  'record-rejection': [...BASE, ...RUN_STATE_READ_WRITE, ...DATA_KEY_WRITE],
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

describe('Countersign least privilege', () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthesizeTestStack();
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
});
