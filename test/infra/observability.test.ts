import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { COUNTERSIGN_METRICS_NAMESPACE, METRIC_NAMES } from '../../lambdas/core/metric-names.js';
import { ALARM_THRESHOLD_DEFAULTS } from '../../lib/alarm-thresholds.js';
import { ALARM_ON_FIRST_OCCURRENCE, type CountersignAlarmName } from '../../lib/alarms.js';
import { HANDLER_NAMES } from '../../lib/handler-names.js';
import { AWS_PRICES_FOR_ESTIMATE } from '../../lib/spend-estimate.js';
import { WAITING_RUNS_PROBE_INTERVAL } from '../../lib/waiting-runs-probe.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

interface AlarmProperties {
  AlarmName?: string;
  AlarmDescription: string;
  Threshold: number;
  ComparisonOperator: string;
  EvaluationPeriods: number;
  DatapointsToAlarm?: number;
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
      const properties = resource.Properties as AlarmProperties;
      return [name, { ...properties, AlarmDescription: renderText(properties.AlarmDescription) }];
    }),
  ) as Record<CountersignAlarmName, AlarmProperties>;
}

/** A template string as text: an `Fn::Join` (a description holding the API's URL) with `<token>` for each intrinsic. */
function renderText(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join === undefined) return '<token>';
  return join[1].map((part) => (typeof part === 'string' ? part : '<token>')).join(join[0]);
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

  it('shows the spend estimate: per hour, per run started, and the model cost by configuration', () => {
    // Assess
    expect(dashboardBody).toContain('Estimated spend per run started (USD)');
    expect(dashboardBody).toContain('IF(runs > 0');
    expect(dashboardBody).toContain(`${AWS_PRICES_FOR_ESTIMATE.stateTransition}`);
    expect(dashboardBody).toContain(`${AWS_PRICES_FOR_ESTIMATE.lambdaGbSecond}`);
    const plain = dashboardBody.replaceAll('\\', '');
    for (const name of [
      'ModelCost',
      'ModelInputTokens',
      'ModelOutputTokens',
      'ModelLatency',
      'ModelErrors',
    ]) {
      expect(plain, name).toContain(
        `SEARCH('{Countersign,configuration,provider,service} MetricName="${name}" service="${SERVICE}"'`,
      );
    }
    // Plain decimals only: metric math reads `2e-7` as an unknown identifier `e`.
    expect(dashboardBody).not.toMatch(/\d[eE]-\d/);
    expect(dashboardBody).toContain('invocations0 * 0.0000002 ');
    const warnings = synthesized.app.node
      .findAll()
      .flatMap((construct) => construct.node.metadata)
      .filter((entry) => entry.type === 'aws:cdk:warning');
    expect(warnings.map((entry) => String(entry.data))).toEqual([]);
    // Every handler's duration is priced by its own memory.
    expect(dashboardBody).toContain('/ 1000 * 1 * ');
    expect(dashboardBody).toContain('/ 1000 * 0.25 * ');
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

  it('probes the waiting runs on a schedule with a function that creates and deletes nothing', () => {
    // Prepare
    const probe = synthesized.logicalIdOf(synthesized.stack.countersign.functions['report-waiting-runs']);

    // Assess
    synthesized.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: `rate(${WAITING_RUNS_PROBE_INTERVAL.toMinutes()} minutes)`,
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [probe, 'Arn'] } })],
    });
    const actions = synthesized.actionsOf(synthesized.roleOf('report-waiting-runs'));
    expect(actions.has('dynamodb:Query')).toBe(true);
    // It only updates what exists: a redelivered decision's card (closed) and record (delivered).
    expect([...actions].filter((action) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(action))).toEqual([
      'dynamodb:UpdateItem',
    ]);
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
