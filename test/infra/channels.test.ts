import { readFile } from 'node:fs/promises';
import { App, Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { EmailIdentity } from 'aws-cdk-lib/aws-ses';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  emailChannelEnvironmentSchema,
  slackChannelEnvironmentSchema,
} from '../../lambdas/contract/environment.js';
import { ROUTES, routeKeyOf, transportOf } from '../../lambdas/contract/routes.js';
import { Countersign } from '../../lib/countersign.js';
import { CARD_CLOSING_HANDLERS } from '../../lib/countersign-functions.js';
import { CHANNEL_HANDLER_NAMES, type ChannelHandlerName, HANDLER_NAMES } from '../../lib/handler-names.js';
import { resolveProjectPath } from '../../lib/project-path.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const XRAY = ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'];
/** The data key through DynamoDB (a writer's four), and the sealing key's Decrypt folded in. */
const DATA_KEY_WRITE = ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'];
const SECRET_READ = ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'];
/** What a Lambda on-failure destination needs of its dead-letter queue. */
const DEAD_LETTERS = ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'];
const CARD_READER_TABLE = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
];

/** Every action of each channel's role, written out: widening a grant fails here. */
const EXPECTED_ACTIONS: Record<ChannelHandlerName, readonly string[]> = {
  'slack-notify': [
    ...LOGS,
    ...XRAY,
    ...CARD_READER_TABLE,
    ...DATA_KEY_WRITE,
    ...SECRET_READ,
    ...DEAD_LETTERS,
    'states:StopExecution',
    'events:PutEvents',
  ],
  'slack-interactions': [
    ...LOGS,
    ...XRAY,
    ...CARD_READER_TABLE,
    ...DATA_KEY_WRITE,
    ...SECRET_READ,
    'kms:Sign', // the receipt key: it signs the entries of the decisions it records
    'states:SendTaskSuccess',
    'states:SendTaskFailure',
    'states:StopExecution',
    'events:PutEvents',
  ],
  'email-notify': [
    ...LOGS,
    ...XRAY,
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    ...DATA_KEY_WRITE,
    ...DEAD_LETTERS,
    'ses:SendEmail',
  ],
};

const SLACK = {
  signingSecretName: 'countersign/slack-signing-secret',
  botTokenSecretName: 'countersign/slack-bot-token',
  routes: [{ channelId: 'C0123456789' }, { channelId: 'C0FINANCE01', approverGroup: 'finance' }],
};
const EMAIL = { identityName: 'example.com', fromAddress: 'countersign@example.com' };

describe('the notification channels (issue #23)', () => {
  let synthesized: SynthesizedStack;
  let roleOf: (name: ChannelHandlerName) => string;
  beforeAll(() => {
    synthesized = synthesizeTestStack({ slack: SLACK, email: EMAIL });
    roleOf = (name) => {
      const role = synthesized.stack.countersign.channels?.functions[name]?.role;
      if (role === undefined) throw new Error(`no ${name} function`);
      return synthesized.logicalIdOf(role);
    };
  });

  it('grants each channel function exactly what its channel calls', () => {
    // Act
    const granted = Object.fromEntries(
      (Object.keys(EXPECTED_ACTIONS) as ChannelHandlerName[]).map((name) => [
        name,
        [...synthesized.actionsOf(roleOf(name))].sort(),
      ]),
    );

    // Assess
    expect(granted).toEqual(
      Object.fromEntries(
        Object.entries(EXPECTED_ACTIONS).map(([name, actions]) => [name, [...actions].sort()]),
      ),
    );
  });

  it('lets only the interaction function read the signing secret, and only the Slack functions the bot token', () => {
    // Act
    const readers = (secretName: string) =>
      synthesized
        .rolesGranted('secretsmanager:GetSecretValue')
        .filter((role) =>
          synthesized
            .statementsOf(role)
            .some(
              (statement) =>
                [statement.Action].flat().includes('secretsmanager:GetSecretValue') &&
                JSON.stringify(statement.Resource).includes(`secret:${secretName}-`),
            ),
        );

    // Assess
    expect(readers(SLACK.signingSecretName)).toEqual([roleOf('slack-interactions')]);
    expect(readers(SLACK.botTokenSecretName)).toEqual(
      [roleOf('slack-interactions'), roleOf('slack-notify')].sort(),
    );
  });

  it('lets the Slack interaction sign receipt entries with the receipt key, as the API’s decision does, and tells it the key', () => {
    expect(synthesized.rolesGranted('kms:Sign')).toEqual(
      [synthesized.roleOf('api-decision'), roleOf('slack-interactions')].sort(),
    );
    const receiptKey = synthesized.logicalIdOf(synthesized.stack.countersign.receiptSigningKey);
    synthesized.template.hasResourceProperties('AWS::Lambda::Function', {
      Role: { 'Fn::GetAtt': [roleOf('slack-interactions'), 'Arn'] },
      Environment: {
        Variables: Match.objectLike({ COUNTERSIGN_RECEIPT_KEY_ARN: { 'Fn::GetAtt': [receiptKey, 'Arn'] } }),
      },
    });
  });

  it('lets only the decision, the Slack interaction and the redelivering probe resume a run with its task token', () => {
    expect(synthesized.rolesGranted('states:SendTaskSuccess')).toEqual(
      [
        synthesized.roleOf('api-decision'),
        roleOf('slack-interactions'),
        synthesized.roleOf('report-waiting-runs'),
      ].sort(),
    );
  });

  it('sends mail as the verified identity, from its one address, from the email function only', () => {
    // Act
    const senders = synthesized.rolesGranted('ses:SendEmail');
    const [statement] = synthesized
      .statementsOf(roleOf('email-notify'))
      .filter((candidate) => [candidate.Action].flat().includes('ses:SendEmail'));

    // Assess
    expect(senders).toEqual([roleOf('email-notify')]);
    expect(JSON.stringify(statement?.Resource)).toContain(':identity/example.com');
    expect(statement?.Condition).toEqual({ StringEquals: { 'ses:FromAddress': EMAIL.fromAddress } });
  });

  it('serves the Slack interaction route without a JWT authorizer, on its own function', () => {
    // Act
    const routes = Object.values(synthesized.template.findResources('AWS::ApiGatewayV2::Route')) as Array<{
      Properties: { RouteKey: string; AuthorizationType?: string; AuthorizerId?: unknown; Target: unknown };
    }>;
    const slackRoute = routes.find(
      (route) => route.Properties.RouteKey === 'POST /integrations/slack/interactions',
    );
    const integrations = synthesized.template.findResources('AWS::ApiGatewayV2::Integration');
    const target = JSON.stringify(slackRoute?.Properties.Target);
    const [integrationId] = Object.keys(integrations).filter((id) => target.includes(id));

    // Assess
    expect(routes.map((route) => route.Properties.RouteKey).sort()).toEqual(
      ROUTES.filter((route) => transportOf(route) === 'http-api')
        .map(routeKeyOf)
        .sort(),
    );
    expect(slackRoute?.Properties.AuthorizationType ?? 'NONE').toBe('NONE');
    expect(slackRoute?.Properties.AuthorizerId).toBeUndefined();
    expect(JSON.stringify(integrations[integrationId ?? '']?.Properties.IntegrationUri)).toContain(
      synthesized.logicalIdOf(
        synthesized.stack.countersign.channels?.functions['slack-interactions'] ?? synthesized.stack,
      ),
    );
  });

  it('targets each channel with countersign’s events, retried, then kept in its encrypted dead-letter queue', () => {
    // Act
    const { template } = synthesized;

    // Assess
    for (const [name, detailTypes] of [
      ['slack-notify', ['Run Awaiting Approval', 'Card Closed']],
      ['email-notify', ['Run Awaiting Approval']],
    ] as const) {
      const handler = synthesized.stack.countersign.channels?.functions[name];
      const functionId = synthesized.logicalIdOf(handler ?? synthesized.stack);
      template.hasResourceProperties('AWS::Events::Rule', {
        EventPattern: { source: ['countersign'], 'detail-type': detailTypes },
        Targets: [
          Match.objectLike({
            Arn: { 'Fn::GetAtt': [functionId, 'Arn'] },
            DeadLetterConfig: { Arn: Match.anyValue() },
            RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 7200 },
          }),
        ],
      });
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: functionId },
        MaximumRetryAttempts: 2,
        DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
      });
    }
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    const queues = synthesized.stack.countersign.channels?.deadLetterQueues ?? [];
    expect(queues).toHaveLength(2);
    for (const queue of queues) {
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: Match.absent(),
        SqsManagedSseEnabled: true,
      });
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: synthesized.logicalIdOf(queue) }],
        PolicyDocument: Match.objectLike({
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        }),
      });
    }
  });

  it('alarms on channel failures, dead letters and channel Lambda errors, each a ticket with its runbook entry', () => {
    // Act
    const alarms = synthesized.stack.countersign.observability.alarms;
    const resources = synthesized.template.toJSON().Resources as Record<
      string,
      { Properties: { AlarmDescription: unknown; Threshold: number } }
    >;

    // Assess
    for (const name of ['ChannelDeliveryFailed', 'ChannelDeadLetters', 'ChannelLambdaErrors'] as const) {
      const alarm = alarms[name];
      if (alarm === undefined) throw new Error(`no ${name} alarm`);
      const properties = resources[synthesized.logicalIdOf(alarm)]?.Properties;
      // The description joins the API's URL (a token) with the runbook route and the anchor.
      const description = JSON.stringify(properties?.AlarmDescription);
      expect(description, name).toContain('[ticket]');
      expect(description, name).toContain(`runbook#${name.toLowerCase()}`);
      expect(properties?.Threshold, name).toBe(1);
    }
  });

  it('gives each channel function the variables its channel reads, and they parse as the function reads them', () => {
    // Act
    const functions = synthesized.template.findResources('AWS::Lambda::Function');
    const variablesOf = (name: ChannelHandlerName): Record<string, unknown> => {
      const id = synthesized.logicalIdOf(
        synthesized.stack.countersign.channels?.functions[name] ?? synthesized.stack,
      );
      return (functions[id]?.Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
    };
    // Tokens (ARNs, the API's URL) deploy as strings of their shape.
    const asDeployed = (variables: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(variables).map(([name, value]) => [
          name,
          typeof value === 'string'
            ? value
            : name.endsWith('_ARN')
              ? 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:x'
              : 'https://abc.execute-api.eu-west-1.amazonaws.com/',
        ]),
      );

    // Assess
    for (const name of ['slack-notify', 'slack-interactions'] as const) {
      const parsed = slackChannelEnvironmentSchema.parse(asDeployed(variablesOf(name)));
      expect(parsed.COUNTERSIGN_SLACK_ROUTES).toEqual(SLACK.routes);
    }
    expect(variablesOf('slack-notify').COUNTERSIGN_SLACK_SIGNING_SECRET_ARN).toBeUndefined();
    expect(variablesOf('slack-interactions').COUNTERSIGN_SLACK_SIGNING_SECRET_ARN).toBeDefined();
    expect(emailChannelEnvironmentSchema.parse(asDeployed(variablesOf('email-notify')))).toMatchObject({
      COUNTERSIGN_EMAIL_FROM_ADDRESS: EMAIL.fromAddress,
    });
  });

  it('links each card under the page the Run Awaiting Approval event links to, the API or `inboxUrl`', () => {
    // Prepare
    const onOwnDomain = synthesizeTestStack({
      email: EMAIL,
      countersign: { inboxUrl: 'https://approvals.example.com/' },
    });
    const inboxUrlOf = (stack: SynthesizedStack, handler: IFunction | undefined): unknown => {
      const id = stack.logicalIdOf(handler ?? stack.stack);
      return stack.template.findResources('AWS::Lambda::Function')[id]?.Properties.Environment?.Variables
        ?.COUNTERSIGN_INBOX_URL;
    };

    // Act
    const event = inboxUrlOf(synthesized, synthesized.stack.countersign.functions['await-approval']);
    const linked = CHANNEL_HANDLER_NAMES.map((name) =>
      inboxUrlOf(synthesized, synthesized.stack.countersign.channels?.functions[name]),
    );

    // Assess
    expect(event).toBeDefined();
    for (const url of linked) expect(url).toEqual(event);
    expect(inboxUrlOf(onOwnDomain, onOwnDomain.stack.countersign.channels?.functions['email-notify'])).toBe(
      'https://approvals.example.com/',
    );
  });

  it('announces closing cards from exactly the functions allowed to put events', async () => {
    // Act: which run store each Lambda entry composes
    const closers: readonly string[] = [...CARD_CLOSING_HANDLERS, 'slack-notify', 'slack-interactions'];
    const announcing = await Promise.all(
      [...HANDLER_NAMES, ...CHANNEL_HANDLER_NAMES].map(async (name) => {
        const entry = await readFile(resolveProjectPath(`lambdas/handlers/${name}.ts`), 'utf8');
        // The entry composes the announcing store itself or through a composition file it imports.
        const compositions = [...entry.matchAll(/from '\.\/composition\/([a-z-]+)\.js'/g)]
          .map((match) => match[1])
          .filter((file) => file !== 'aws-announcing-runs');
        const composed = await Promise.all(
          compositions.map((file) =>
            readFile(resolveProjectPath(`lambdas/handlers/composition/${file}.ts`), 'utf8'),
          ),
        );
        return [name, [entry, ...composed].some((source) => /awsAnnouncingRuns\(\)/.test(source))] as const;
      }),
    );

    // Assess: a closer without the announcer would close cards its channels never hear of
    for (const [name, announces] of announcing) expect(announces, name).toBe(closers.includes(name));
  });

  it('has no channel function, route, rule or channel alarm without channels', () => {
    // Act
    const plain = synthesizeTestStack();
    const routeKeys = Object.values(plain.template.findResources('AWS::ApiGatewayV2::Route')).map(
      (route) => (route as { Properties: { RouteKey: string } }).Properties.RouteKey,
    );

    // Assess
    expect(plain.stack.countersign.channels).toBeUndefined();
    expect(routeKeys).not.toContain('POST /integrations/slack/interactions');
    expect(Object.keys(plain.template.findResources('AWS::Events::Rule'))).toHaveLength(1); // the probe
    expect(plain.stack.countersign.observability.alarms.ChannelDeadLetters).toBeUndefined();
    expect(plain.stack.countersign.observability.alarms.ChannelDeliveryFailed).toBeDefined();
  });
});

describe('channel props', () => {
  const secrets = (stack: Stack) => ({
    signingSecret: Secret.fromSecretNameV2(stack, 'Signing', 'signing'),
    botToken: Secret.fromSecretNameV2(stack, 'Bot', 'bot'),
  });

  it.each([
    [[{ channelId: 'general' }], /routes\[0\] \{"channelId":"general"\} is invalid/],
    [[{ channelId: 'C0123456789', approverGroup: 'no spaces' }], /routes\[0\].*is invalid/],
    [[], /has 0 routes; give 1 to 20/],
    [[{ channelId: 'C0123456789' }, { channelId: 'C0123456789' }], /lists .* twice/],
  ])('refuses Slack routes %j, quoting them', (routes, message) => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Props');
    expect(
      () => new Countersign(stack, 'Countersign', { channels: { slack: { ...secrets(stack), routes } } }),
    ).toThrow(message);
  });

  it.each([
    ['not-an-address', 'example.com', /fromAddress "not-an-address" is not an email address/],
    ['countersign@elsewhere.com', 'example.com', /not covered by the SES identity "example.com"/],
    ['other@example.com', 'countersign@example.com', /not covered by the SES identity/],
  ])('refuses the From address %s for the identity %s', (fromAddress, identityName, message) => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Props');
    const identity = EmailIdentity.fromEmailIdentityName(stack, 'Identity', identityName);
    expect(
      () => new Countersign(stack, 'Countersign', { channels: { email: { identity, fromAddress } } }),
    ).toThrow(message);
  });

  it('accepts an address of a subdomain of a verified domain', () => {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Props');
    const identity = EmailIdentity.fromEmailIdentityName(stack, 'Identity', 'example.com');
    expect(
      () =>
        new Countersign(stack, 'Countersign', {
          channels: { email: { identity, fromAddress: 'approvals@mail.example.com' } },
        }),
    ).not.toThrow();
  });
});
