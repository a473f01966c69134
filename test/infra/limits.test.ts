import { readFileSync } from 'node:fs';
import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { failedStateName, STATE_NAMES } from '../../lambdas/contract/state-names.js';
import { TABLE_LAYOUT } from '../../lambdas/contract/table-layout.js';
import { THROTTLING_DEFAULTS } from '../../lambdas/core/limits.js';
import { HANDLER_NAMES, type HandlerName } from '../../lib/handler-names.js';
import {
  FUNCTION_GROUPS,
  LIMIT_DEFAULTS,
  RESERVED_CONCURRENCY_FOR_PRODUCTION,
  requiredAccountConcurrency,
} from '../../lib/limits.js';
import { resolveProjectPath } from '../../lib/project-path.js';
import { extractStateMachineDefinition } from '../../lib/state-machine-definition.js';
import { definitionStatesOf, type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

interface FunctionProperties {
  ReservedConcurrentExecutions?: number;
  Environment?: { Variables?: Record<string, unknown> };
}

describe('production limits', () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthesizeTestStack();
  });

  function functionOf(target: SynthesizedStack, name: HandlerName): FunctionProperties {
    const logicalId = target.logicalIdOf(target.stack.countersign.functions[name]);
    return target.template.toJSON().Resources[logicalId].Properties as FunctionProperties;
  }

  describe('throttling', () => {
    it('throttles every route of the default stage at the defaults local mode enforces too', () => {
      // Assess
      expect(LIMIT_DEFAULTS.throttling).toEqual(THROTTLING_DEFAULTS);
      synthesized.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        StageName: '$default',
        DefaultRouteSettings: {
          ThrottlingRateLimit: THROTTLING_DEFAULTS.rateLimit,
          ThrottlingBurstLimit: THROTTLING_DEFAULTS.burstLimit,
        },
      });
    });

    it('takes rate and burst from the throttling prop', () => {
      // Act
      const tuned = synthesizeTestStack({ countersign: { throttling: { rateLimit: 5, burstLimit: 12 } } });

      // Assess
      tuned.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        DefaultRouteSettings: { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 12 },
      });
    });

    it.each([
      [{ rateLimit: 0 }, /throttling.rateLimit 0 is invalid/],
      [{ rateLimit: Number.NaN }, /throttling.rateLimit null is invalid/],
      [{ burstLimit: 2.5 }, /throttling.burstLimit 2.5 is invalid/],
      [{ burstLimit: 10_000 }, /throttling.burstLimit 10000 is invalid/],
    ])('refuses throttling %j, naming the value', (throttling, message) => {
      // Act and assess
      expect(() => synthesizeTestStack({ countersign: { throttling } })).toThrow(message);
    });
  });

  describe('reserved concurrency', () => {
    it('reserves nothing by default, so a first deploy fits a new account as it comes', () => {
      // Act
      const reserved = HANDLER_NAMES.map(
        (name) => functionOf(synthesized, name).ReservedConcurrentExecutions,
      );

      // Assess
      expect(reserved).toEqual(HANDLER_NAMES.map(() => undefined));
    });

    it('reserves, with the production setting, each group what the runbook’s production checklist says', () => {
      // Prepare
      const runbook = readFileSync(resolveProjectPath('docs/runbook.md'), 'utf8');
      const production = synthesizeTestStack({
        countersign: { reservedConcurrency: RESERVED_CONCURRENCY_FOR_PRODUCTION },
      });

      // Act
      const reserved = Object.fromEntries(
        HANDLER_NAMES.map((name) => [name, functionOf(production, name).ReservedConcurrentExecutions ?? 0]),
      );
      const total = Object.values(reserved).reduce((sum, value) => sum + value, 0);

      // Assess
      for (const name of HANDLER_NAMES) {
        expect(reserved[name], name).toBe(RESERVED_CONCURRENCY_FOR_PRODUCTION[FUNCTION_GROUPS[name]]);
        expect(reserved[name], name).toBeGreaterThan(0);
      }
      expect(reserved['api-run-events']).toBe(10);
      expect(reserved['report-waiting-runs']).toBe(1);
      expect(total).toBe(101);
      expect(requiredAccountConcurrency(RESERVED_CONCURRENCY_FOR_PRODUCTION)).toBe(total + 100);
      expect(runbook).toContain(
        `reservedConcurrency: RESERVED_CONCURRENCY_FOR_PRODUCTION\` reserves ${total} concurrent executions`,
      );
      expect(runbook).toContain(`a Lambda concurrency quota of at least ${total + 100}`);
      for (const [group, value] of Object.entries(RESERVED_CONCURRENCY_FOR_PRODUCTION)) {
        expect(runbook, group).toContain(`| \`${group}\` | ${value} |`);
      }
    });

    it('takes a group from the prop and leaves the groups it does not name unreserved', () => {
      // Act
      const tuned = synthesizeTestStack({
        countersign: { reservedConcurrency: { api: 20, events: 3, steps: undefined } },
      });

      // Assess
      expect(functionOf(tuned, 'api-inbox').ReservedConcurrentExecutions).toBe(20);
      expect(functionOf(tuned, 'api-run-events').ReservedConcurrentExecutions).toBe(3);
      expect(functionOf(tuned, 'model-turn').ReservedConcurrentExecutions).toBeUndefined();
      expect(functionOf(tuned, 'finish-run').ReservedConcurrentExecutions).toBeUndefined();
      expect(functionOf(tuned, 'report-waiting-runs').ReservedConcurrentExecutions).toBeUndefined();
    });

    it.each([
      [{ api: 0 }, /reservedConcurrency.api 0 is invalid/],
      [{ probe: 1.5 }, /reservedConcurrency.probe 1.5 is invalid/],
      [{ steps: 5000 }, /reservedConcurrency.steps 5000 is invalid/],
    ])('refuses reserved concurrency %j, naming the group', (reservedConcurrency, message) => {
      // Act and assess
      expect(() => synthesizeTestStack({ countersign: { reservedConcurrency } })).toThrow(message);
    });
  });

  describe('retention', () => {
    it('expires ended runs by DynamoDB TTL and overflow objects by a lifecycle rule, 90 days by default', () => {
      // Prepare: 90 days, plus the 7-day approval timeout and a day
      const overflowDays = 90 + 7 + 1;

      // Assess
      synthesized.template.hasResourceProperties('AWS::DynamoDB::Table', {
        TimeToLiveSpecification: { AttributeName: TABLE_LAYOUT.timeToLiveAttribute, Enabled: true },
      });
      const bucketId = synthesized.logicalIdOf(synthesized.stack.countersign.overflowBucket);
      const bucket = synthesized.template.toJSON().Resources[bucketId];
      expect(bucket.Properties.LifecycleConfiguration).toEqual({
        Rules: [{ Id: 'ExpireOverflow', ExpirationInDays: overflowDays, Status: 'Enabled' }],
      });
      for (const name of HANDLER_NAMES) {
        const variables = functionOf(synthesized, name).Environment?.Variables ?? {};
        expect(variables.COUNTERSIGN_ENDED_RUN_RETENTION_SECONDS, name).toBe(String(90 * 86_400));
        // Decisions and the audit are kept forever unless a retention is set.
        expect(variables.COUNTERSIGN_DECISION_RETENTION_SECONDS, name).toBeUndefined();
      }
    });

    it('takes the retention of ended runs and of decisions from the prop', () => {
      // Act
      const tuned = synthesizeTestStack({
        countersign: {
          approvalTimeout: Duration.days(2),
          retention: { endedRuns: Duration.days(30), decisions: Duration.days(400) },
        },
      });

      // Assess
      const bucketId = tuned.logicalIdOf(tuned.stack.countersign.overflowBucket);
      expect(tuned.template.toJSON().Resources[bucketId].Properties.LifecycleConfiguration.Rules).toEqual([
        { Id: 'ExpireOverflow', ExpirationInDays: 30 + 2 + 1, Status: 'Enabled' },
      ]);
      expect(functionOf(tuned, 'api-decision').Environment?.Variables).toMatchObject({
        COUNTERSIGN_ENDED_RUN_RETENTION_SECONDS: String(30 * 86_400),
        COUNTERSIGN_DECISION_RETENTION_SECONDS: String(400 * 86_400),
      });
    });

    it.each([
      [{ endedRuns: Duration.hours(36) }, /retention.endedRuns .+ is not a whole number of days/],
      [{ endedRuns: Duration.days(0) }, /retention.endedRuns 0 days is out of range/],
      [{ decisions: Duration.days(5000) }, /retention.decisions 5000 days is out of range/],
    ])('refuses retention %j, naming the field', (retention, message) => {
      // Act and assess
      expect(() => synthesizeTestStack({ countersign: { retention } })).toThrow(message);
    });
  });

  describe('failure paths', () => {
    it('retries the probe schedule delivery and keeps what fails in an encrypted, TLS-only dead-letter queue', () => {
      // Prepare
      const queueId = synthesized.logicalIdOf(
        synthesized.stack.countersign.observability.probeDeadLetterQueue,
      );

      // Assess
      synthesized.template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'rate(5 minutes)',
        Targets: [
          Match.objectLike({
            RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 300 },
            DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queueId, 'Arn'] } },
          }),
        ],
      });
      synthesized.template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
      synthesized.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: queueId }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            Match.objectLike({
              Effect: 'Allow',
              Action: 'sqs:SendMessage',
              Principal: { Service: 'events.amazonaws.com' },
            }),
          ]),
        },
      });
    });

    it('alarms on the first message in the dead-letter queue', () => {
      // Prepare
      const alarm = synthesized.stack.countersign.observability.alarms.ProbeDeadLetters;
      const queueName = {
        'Fn::GetAtt': [
          synthesized.logicalIdOf(synthesized.stack.countersign.observability.probeDeadLetterQueue),
          'QueueName',
        ],
      };

      // Act
      const properties = synthesized.template.toJSON().Resources[synthesized.logicalIdOf(alarm)].Properties;

      // Assess
      expect(properties).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: queueName }],
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      expect(JSON.stringify(properties.AlarmDescription)).toContain('runbook#probedeadletters');
    });

    it('retries the ContinueAsNew hand-over before the run is marked failed', () => {
      // Act
      const states = definitionStatesOf(extractStateMachineDefinition(synthesized.template.toJSON()));
      const continueAsNew = states[STATE_NAMES.continueAsNew];

      // Assess
      expect(continueAsNew?.Retry).toEqual([
        {
          ErrorEquals: ['States.TaskFailed', 'States.Timeout'],
          IntervalSeconds: 2,
          BackoffRate: 2,
          MaxAttempts: 3,
        },
      ]);
      expect(continueAsNew?.Catch).toEqual([
        {
          ErrorEquals: ['States.ALL'],
          ResultPath: '$.failure',
          Next: failedStateName(STATE_NAMES.continueAsNew),
        },
      ]);
    });
  });

  describe('access log identity', () => {
    it("records the caller's sub and nothing that carries the token", () => {
      // Act
      const [stage] = Object.values(synthesized.template.findResources('AWS::ApiGatewayV2::Stage')) as Array<{
        Properties: { AccessLogSettings: { Format: string } };
      }>;
      const format = JSON.parse(stage?.Properties.AccessLogSettings.Format ?? '{}') as Record<string, string>;

      // Assess
      expect(format.sub).toBe('$context.authorizer.claims.sub');
      for (const value of Object.values(format)) {
        expect(value).not.toMatch(/authorization|header|querystring|token/i);
      }
    });
  });
});
