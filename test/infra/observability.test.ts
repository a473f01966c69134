import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { COUNTERSIGN_METRICS_NAMESPACE, METRIC_NAMES } from '../../lambdas/contract/metric-names.js';
import { ALARM_THRESHOLD_DEFAULTS } from '../../lib/alarm-thresholds.js';
import { ALARM_ON_FIRST_OCCURRENCE, type CountersignAlarmName } from '../../lib/alarms.js';
import { HANDLER_NAMES } from '../../lib/handler-names.js';
import { WAITING_RUNS_PROBE_INTERVAL } from '../../lib/waiting-runs-probe.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

interface AlarmProperties {
  AlarmName?: string;
  AlarmDescription: string;
  Threshold: number;
  ComparisonOperator: string;
  EvaluationPeriods: number;
  TreatMissingData: string;
  AlarmActions: unknown[];
  OKActions: unknown[];
  MetricName?: string;
  Namespace?: string;
  ExtendedStatistic?: string;
  Statistic?: string;
  Dimensions?: Array<{ Name: string; Value: unknown }>;
  Metrics?: Array<{
    Id: string;
    Expression?: string;
    MetricStat?: { Metric: { MetricName: string; Namespace: string } };
  }>;
}

const SERVICE = 'Countersign-Countersign';

/** The alarms of a synthesized stack by the runbook name, read from the logical id. */
function alarmsOf(synthesized: SynthesizedStack): Record<CountersignAlarmName, AlarmProperties> {
  const alarms = synthesized.stack.countersign.observability.alarms;
  return Object.fromEntries(
    Object.entries(alarms).map(([name, alarm]) => {
      const resource = synthesized.template.toJSON().Resources[synthesized.logicalIdOf(alarm)];
      return [name, resource.Properties as AlarmProperties];
    }),
  ) as Record<CountersignAlarmName, AlarmProperties>;
}

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

/**
 * The countersign metric names a dashboard body graphs: metric arrays in the Countersign
 * namespace (`[namespace, name, ...]`, `"."` repeating the one before) and search expressions.
 */
function countersignMetricsOnDashboard(dashboardBody: string): string[] {
  const names: string[] = [];
  let namespace = '';
  for (const match of dashboardBody.matchAll(/\[\\+"([^"\\]+)\\+",\\+"([^"\\]+)\\+"/g)) {
    namespace = match[1] === '.' ? namespace : (match[1] ?? '');
    if (namespace === COUNTERSIGN_METRICS_NAMESPACE && match[2]) names.push(match[2]);
  }
  for (const match of dashboardBody.matchAll(/MetricName=\\+"([A-Za-z]+)\\+"/g))
    if (match[1]) names.push(match[1]);
  return names;
}

describe('Countersign observability', () => {
  let synthesized: SynthesizedStack;
  let alarms: Record<CountersignAlarmName, AlarmProperties>;
  let dashboardBody: string;

  beforeAll(() => {
    synthesized = synthesizeTestStack();
    alarms = alarmsOf(synthesized);
    const [dashboard] = Object.values(synthesized.template.findResources('AWS::CloudWatch::Dashboard'));
    dashboardBody = JSON.stringify(dashboard?.Properties.DashboardBody);
  });

  it('creates one dashboard with every application metric beside the AWS services it runs on', () => {
    // Assess
    synthesized.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const shown = new Set(countersignMetricsOnDashboard(dashboardBody));
    expect(METRIC_NAMES.filter((name) => !shown.has(name))).toEqual([]);
    expect(dashboardBody).toContain(COUNTERSIGN_METRICS_NAMESPACE);
    expect(dashboardBody).toContain(SERVICE);
    for (const namespace of ['AWS/States', 'AWS/Lambda', 'AWS/DynamoDB', 'AWS/ApiGateway']) {
      expect(dashboardBody, namespace).toContain(namespace);
    }
    for (const decision of ['approve', 'reject'])
      expect(dashboardBody).toContain(`\\"outcome\\",\\"${decision}\\"`);
  });

  it('raises the state machine alarms at the first failed, timed out or throttled execution', () => {
    // Assess
    for (const [name, metric] of [
      ['ExecutionsFailed', 'ExecutionsFailed'],
      ['ExecutionsTimedOut', 'ExecutionsTimedOut'],
      ['ExecutionsThrottled', 'ExecutionThrottled'],
    ] as const) {
      expect(alarms[name], name).toMatchObject({
        Namespace: 'AWS/States',
        MetricName: metric,
        Threshold: ALARM_ON_FIRST_OCCURRENCE,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
      });
    }
  });

  it('raises Lambda error and throttle alarms over every handler, steps and API apart', () => {
    // Act
    const covered = (names: CountersignAlarmName[], metric: string) =>
      names.flatMap((name) =>
        (alarms[name].Metrics ?? []).filter((entry) => entry.MetricStat?.Metric.MetricName === metric),
      );

    // Assess
    expect(covered(['StepLambdaErrors', 'ApiLambdaErrors'], 'Errors')).toHaveLength(HANDLER_NAMES.length);
    expect(covered(['StepLambdaThrottles', 'ApiLambdaThrottles'], 'Throttles')).toHaveLength(
      HANDLER_NAMES.length,
    );
    for (const name of [
      'StepLambdaErrors',
      'StepLambdaThrottles',
      'ApiLambdaErrors',
      'ApiLambdaThrottles',
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

  it('sends every alarm and its recovery to the encrypted topic and links its runbook entry', () => {
    // Prepare
    const topicId = synthesized.logicalIdOf(synthesized.stack.countersign.observability.alarmTopic);

    // Assess
    expect(Object.keys(alarms)).toHaveLength(18);
    for (const [name, alarm] of Object.entries(alarms)) {
      expect(alarm.AlarmActions, name).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions, name).toEqual([{ Ref: topicId }]);
      expect(alarm.TreatMissingData, name).toBe('notBreaching');
      expect(alarm.AlarmDescription, name).toContain(`docs/runbook.md#${name.toLowerCase()}`);
    }
    synthesized.template.hasResourceProperties('AWS::SNS::Topic', {
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

  it('uses a given topic and thresholds instead of its own', () => {
    // Prepare
    const oncall = Topic.fromTopicArn(
      new Stack(new App(), 'Elsewhere'),
      'Oncall',
      'arn:aws:sns:us-east-1:123456789012:oncall',
    );

    // Act
    const custom = synthesizeTestStack({
      countersign: {
        alarmTopic: oncall,
        alarmThresholds: { runWaitingLongerThan: Duration.hours(2), previewFailurePercent: 5 },
      },
    });
    const customAlarms = alarmsOf(custom);

    // Assess
    custom.template.resourceCountIs('AWS::SNS::Topic', 0);
    expect(customAlarms.RunWaitingTooLong.Threshold).toBe(Duration.hours(2).toMilliseconds());
    expect(customAlarms.PreviewFailureRate.Threshold).toBe(5);
    expect(customAlarms.Api5xx.AlarmActions).toEqual(['arn:aws:sns:us-east-1:123456789012:oncall']);
  });

  it('refuses a waiting threshold shorter than the probe interval and an impossible failure rate', () => {
    // Act
    const tooShort = () =>
      synthesizeTestStack({
        countersign: { alarmThresholds: { runWaitingLongerThan: Duration.minutes(1) } },
      });
    const impossible = () =>
      synthesizeTestStack({ countersign: { alarmThresholds: { previewFailurePercent: 150 } } });

    // Assess
    expect(tooShort).toThrow(/runWaitingLongerThan 1 minute is shorter than the probe interval/);
    expect(impossible).toThrow(/previewFailurePercent 150 is invalid/);
  });

  it('probes the waiting runs on a schedule with a read-only function', () => {
    // Prepare
    const probe = synthesized.logicalIdOf(synthesized.stack.countersign.functions['report-waiting-runs']);

    // Assess
    synthesized.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: `rate(${WAITING_RUNS_PROBE_INTERVAL.toMinutes()} minutes)`,
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [probe, 'Arn'] } })],
    });
    const actions = synthesized.actionsOf(synthesized.roleOf('report-waiting-runs'));
    expect(actions.has('dynamodb:Query')).toBe(true);
    expect([...actions].filter((action) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(action))).toEqual(
      [],
    );
  });

  it('gives every Lambda the service name and log level, and the log level by prop', () => {
    // Prepare
    const verbose = synthesizeTestStack({
      countersign: { logLevel: 'DEBUG', serviceName: 'approvals-prod' },
    });

    // Act
    const environments = (template: SynthesizedStack['template']) =>
      Object.values(template.findResources('AWS::Lambda::Function')).map(
        (resource) => resource.Properties.Environment?.Variables ?? {},
      );

    // Assess
    for (const variables of environments(synthesized.template)) {
      expect(variables).toMatchObject({ POWERTOOLS_SERVICE_NAME: SERVICE, POWERTOOLS_LOG_LEVEL: 'INFO' });
      expect(variables.POWERTOOLS_LOGGER_LOG_EVENT).toBeUndefined();
    }
    for (const variables of environments(verbose.template)) {
      expect(variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'approvals-prod',
        POWERTOOLS_LOG_LEVEL: 'DEBUG',
      });
    }
    expect(JSON.stringify(alarmsOf(verbose).SkillChecksumMismatch.Dimensions)).toContain('approvals-prod');
  });

  it('refuses an unknown log level and a service name with spaces', () => {
    // Act
    const badLevel = () => synthesizeTestStack({ countersign: { logLevel: 'TRACE' as 'DEBUG' } });
    const badName = () => synthesizeTestStack({ countersign: { serviceName: 'my service' } });

    // Assess
    expect(badLevel).toThrow(/logLevel "TRACE" is not supported/);
    expect(badName).toThrow(/serviceName "my service" is invalid/);
  });
});
