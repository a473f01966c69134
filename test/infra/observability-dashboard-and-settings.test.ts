import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { COUNTERSIGN_METRICS_NAMESPACE, METRIC_NAMES } from '../../lambdas/core/metric-names.js';
import { AWS_PRICES_FOR_ESTIMATE } from '../../lib/spend-estimate.js';
import { WAITING_RUNS_PROBE_INTERVAL } from '../../lib/waiting-runs-probe.js';
import { alarmsOf, SERVICE } from './observability-support.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

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
  let dashboardBody: string;

  beforeAll(() => {
    synthesized = synthesizeTestStack();
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
