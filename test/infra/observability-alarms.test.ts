import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { COUNTERSIGN_METRICS_NAMESPACE } from '../../lambdas/core/metric-names.js';
import { ALARM_THRESHOLD_DEFAULTS } from '../../lib/alarm-thresholds.js';
import { ALARM_ON_FIRST_OCCURRENCE, type CountersignAlarmName } from '../../lib/alarms.js';
import { HANDLER_NAMES } from '../../lib/handler-names.js';
import { type AlarmProperties, alarmsOf, SERVICE } from './observability-support.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

/** The metric names an alarm reads, directly or through metric math. */
function metricNamesOf(alarm: AlarmProperties): string[] {
  if (alarm.MetricName) return [alarm.MetricName];
  return (alarm.Metrics ?? []).flatMap((metric) =>
    metric.MetricStat ? [metric.MetricStat.Metric.MetricName] : [],
  );
}

function namespacesOf(alarm: AlarmProperties): string[] {
  if (alarm.Namespace) return [alarm.Namespace];
  return (alarm.Metrics ?? []).flatMap((metric) =>
    metric.MetricStat ? [metric.MetricStat.Metric.Namespace] : [],
  );
}

describe('Countersign observability', () => {
  let synthesized: SynthesizedStack;
  let alarms: Record<CountersignAlarmName, AlarmProperties>;

  beforeAll(() => {
    synthesized = synthesizeTestStack();
    alarms = alarmsOf(synthesized);
  });

  it('opens a ticket at each failed or timed out execution, and when throttling goes on', () => {
    // Assess
    for (const [name, metric, datapoints, periods] of [
      ['ExecutionsFailed', 'ExecutionsFailed', 1, 1],
      ['ExecutionsTimedOut', 'ExecutionsTimedOut', 1, 1],
      ['ExecutionsThrottled', 'ExecutionThrottled', 2, 3],
    ] as const) {
      expect(alarms[name], name).toMatchObject({
        Namespace: 'AWS/States',
        MetricName: metric,
        Threshold: ALARM_ON_FIRST_OCCURRENCE,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        DatapointsToAlarm: datapoints,
        EvaluationPeriods: periods,
      });
      expect(alarms[name].AlarmDescription, name).toMatch(/^\[ticket\] /);
    }
  });

  it('names every alarm with the deployment prefix and gives it one of two severities', () => {
    // Assess
    for (const [name, alarm] of Object.entries(alarms)) {
      expect(alarm.AlarmName, name).toBe(`${SERVICE}-${name}`);
      expect(alarm.AlarmDescription, name).toMatch(/^\[(page|ticket)\] /);
    }
    const paging = Object.entries(alarms)
      .filter(([, alarm]) => alarm.AlarmDescription.startsWith('[page]'))
      .map(([name]) => name)
      .sort();
    expect(paging).toEqual([
      'Api5xx',
      'ApiLambdaErrors',
      'DecisionsUndelivered',
      'DynamoDbSystemErrors',
      'ExternalLambdaErrors',
      'ModelErrors',
      'SealedStateRejected',
      'SkillChecksumMismatch',
      'StepLambdaErrors',
    ]);
  });

  it('pages on a single datapoint only for a security signal, and never on a throttle', () => {
    // Assess
    for (const [name, alarm] of Object.entries(alarms)) {
      const pages = alarm.AlarmDescription.startsWith('[page]');
      if (!pages) continue;
      expect(name, name).not.toMatch(/Throttle/);
      if (name === 'SealedStateRejected' || name === 'SkillChecksumMismatch') {
        expect(alarm.DatapointsToAlarm, name).toBe(1);
      } else {
        // M of N: a failure retried away inside one period does not page anyone.
        expect(alarm.DatapointsToAlarm, name).toBeGreaterThanOrEqual(2);
        expect(alarm.EvaluationPeriods, name).toBeGreaterThan(alarm.DatapointsToAlarm ?? 0);
      }
    }
    for (const name of [
      'StepLambdaThrottles',
      'ApiLambdaThrottles',
      'ExternalLambdaThrottles',
      'DynamoDbThrottles',
      'ModelThrottles',
    ] as const) {
      expect(alarms[name].AlarmDescription, name).toMatch(/^\[ticket\] /);
      expect(alarms[name].DatapointsToAlarm, name).toBeGreaterThanOrEqual(2);
    }
  });

  it('alarms on the model provider: sustained errors page, sustained throttles open a ticket', () => {
    // Assess
    for (const [name, metric] of [
      ['ModelErrors', 'ModelErrors'],
      ['ModelThrottles', 'ModelThrottles'],
    ] as const) {
      expect(alarms[name], name).toMatchObject({
        Namespace: COUNTERSIGN_METRICS_NAMESPACE,
        MetricName: metric,
        Dimensions: [{ Name: 'service', Value: SERVICE }],
        Threshold: 1,
        DatapointsToAlarm: 3,
        EvaluationPeriods: 5,
      });
    }
  });

  it('raises Lambda error and throttle alarms over every handler, steps, API and external runs apart', () => {
    // Act
    const covered = (names: CountersignAlarmName[], metric: string) =>
      names.flatMap((name) =>
        (alarms[name].Metrics ?? []).filter((entry) => entry.MetricStat?.Metric.MetricName === metric),
      );

    // Assess
    expect(covered(['StepLambdaErrors', 'ApiLambdaErrors', 'ExternalLambdaErrors'], 'Errors')).toHaveLength(
      HANDLER_NAMES.length,
    );
    expect(
      covered(['StepLambdaThrottles', 'ApiLambdaThrottles', 'ExternalLambdaThrottles'], 'Throttles'),
    ).toHaveLength(HANDLER_NAMES.length);
    for (const name of [
      'StepLambdaErrors',
      'StepLambdaThrottles',
      'ApiLambdaErrors',
      'ApiLambdaThrottles',
      'ExternalLambdaErrors',
      'ExternalLambdaThrottles',
    ] as const) {
      expect(alarms[name].Threshold, name).toBe(ALARM_ON_FIRST_OCCURRENCE);
      expect(alarms[name].Metrics?.length, name).toBeLessThanOrEqual(11);
      expect(namespacesOf(alarms[name])).toEqual(expect.arrayContaining(['AWS/Lambda']));
    }
  });

  it('raises DynamoDB alarms at the first throttled request or system error', () => {
    // Assess
    expect(metricNamesOf(alarms.DynamoDbThrottles)).toEqual(expect.arrayContaining(['ThrottledRequests']));
    expect(metricNamesOf(alarms.DynamoDbSystemErrors)).toEqual(expect.arrayContaining(['SystemErrors']));
    expect(alarms.DynamoDbThrottles.Threshold).toBe(ALARM_ON_FIRST_OCCURRENCE);
    expect(alarms.DynamoDbSystemErrors.Threshold).toBe(ALARM_ON_FIRST_OCCURRENCE);
    expect(alarms.DynamoDbSystemErrors.Metrics?.length).toBeLessThanOrEqual(11);
  });

  it('raises API alarms at the first 5XX and on a p99 latency above 5 seconds for 15 minutes', () => {
    // Assess
    expect(alarms.Api5xx).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Threshold: ALARM_ON_FIRST_OCCURRENCE,
    });
    expect(alarms.ApiLatencyP99).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Threshold: 5000,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
    });
  });

  it('raises the application alarms on preview failures, checksum mismatches, sealed size and waiting runs', () => {
    // Assess
    expect(alarms.PreviewFailureRate.Threshold).toBe(ALARM_THRESHOLD_DEFAULTS.previewFailurePercent);
    expect(alarms.PreviewFailureRate.Metrics?.find((metric) => metric.Expression)?.Expression).toBe(
      'IF(captured > 0, 100 * failed / captured, 0)',
    );
    expect(metricNamesOf(alarms.PreviewFailureRate).sort()).toEqual(['PreviewsCaptured', 'PreviewsFailed']);
    expect(alarms.SkillChecksumMismatch).toMatchObject({
      Namespace: COUNTERSIGN_METRICS_NAMESPACE,
      MetricName: 'SkillChecksumMismatches',
      Threshold: 1,
      Dimensions: [{ Name: 'service', Value: SERVICE }],
    });
    expect(alarms.SealedStateNearItemLimit.Threshold).toBe(300_000);
    expect(metricNamesOf(alarms.SealedStateNearItemLimit).sort()).toEqual([
      'SealedCardBytes',
      'SealedStateBytes',
    ]);
    expect(alarms.SealedStateRejected).toMatchObject({
      Namespace: COUNTERSIGN_METRICS_NAMESPACE,
      MetricName: 'SealedStateRejections',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Dimensions: [{ Name: 'service', Value: SERVICE }],
    });
    expect(alarms.RunWaitingTooLong).toMatchObject({
      MetricName: 'OldestWaitingRunAge',
      Statistic: 'Maximum',
      Threshold: Duration.hours(24).toMilliseconds(),
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it("sends every alarm and its recovery to its severity's encrypted topic and links the runbook the API serves", () => {
    // Prepare
    const { observability } = synthesized.stack.countersign;
    const topicIds = {
      page: synthesized.logicalIdOf(observability.pageTopic),
      ticket: synthesized.logicalIdOf(observability.ticketTopic),
    };
    const resources = synthesized.template.toJSON().Resources;
    const apiId = synthesized.logicalIdOf(synthesized.stack.countersign.httpApi);

    // Assess
    expect(Object.keys(alarms)).toHaveLength(23);
    expect(topicIds.page).not.toBe(topicIds.ticket);
    for (const [name, alarm] of Object.entries(alarms)) {
      const severity = alarm.AlarmDescription.startsWith('[page]') ? 'page' : 'ticket';
      expect(alarm.AlarmActions, name).toEqual([{ Ref: topicIds[severity] }]);
      expect(alarm.OKActions, name).toEqual([{ Ref: topicIds[severity] }]);
      expect(alarm.TreatMissingData, name).toBe('notBreaching');
      // The description joins the API's URL (a token) with the runbook route and the anchor.
      const description = JSON.stringify(
        resources[synthesized.logicalIdOf(observability.alarms[name as CountersignAlarmName])].Properties
          .AlarmDescription,
      );
      expect(description, name).toContain(apiId);
      expect(description, name).toContain(`runbook#${name.toLowerCase()}`);
    }
    synthesized.template.resourceCountIs('AWS::SNS::Topic', 2);
    synthesized.template.allResourcesProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: Match.objectLike({ 'Fn::GetAtt': Match.anyValue() }),
    });
    synthesized.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      }),
    });
    synthesized.template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' } }),
        ]),
      }),
    });
  });

  it('uses given topics, runbook and thresholds instead of its own', () => {
    // Prepare
    const elsewhere = new Stack(new App(), 'Elsewhere');
    const oncall = Topic.fromTopicArn(elsewhere, 'Oncall', 'arn:aws:sns:us-east-1:123456789012:oncall');
    const queue = Topic.fromTopicArn(elsewhere, 'Queue', 'arn:aws:sns:us-east-1:123456789012:queue');

    // Act
    const custom = synthesizeTestStack({
      countersign: {
        alarmTopics: { page: oncall, ticket: queue },
        runbookUrl: 'https://wiki.example.com/countersign/runbook',
        alarmThresholds: { runWaitingLongerThan: Duration.hours(2), previewFailurePercent: 5 },
      },
    });
    const customAlarms = alarmsOf(custom);

    // Assess
    custom.template.resourceCountIs('AWS::SNS::Topic', 0);
    // The data, sealing and receipt keys: no topic key without the construct's own topics.
    custom.template.resourceCountIs('AWS::KMS::Key', 3);
    expect(customAlarms.RunWaitingTooLong.Threshold).toBe(Duration.hours(2).toMilliseconds());
    expect(customAlarms.PreviewFailureRate.Threshold).toBe(5);
    expect(customAlarms.Api5xx.AlarmActions).toEqual(['arn:aws:sns:us-east-1:123456789012:oncall']);
    expect(customAlarms.RunWaitingTooLong.AlarmActions).toEqual(['arn:aws:sns:us-east-1:123456789012:queue']);
    expect(customAlarms.Api5xx.AlarmDescription).toContain(
      'https://wiki.example.com/countersign/runbook#api5xx',
    );
  });
});
