/**
 * The CloudWatch namespace of countersign's own metrics (the dashboard and alarms read it).
 * A module of its own, free of imports, so the CDK construct can read it without loading the
 * metrics adapter's Powertools dependency, which only the Lambda bundles carry.
 *
 * @example
 * new Metric({ namespace: COUNTERSIGN_METRICS_NAMESPACE, metricName: 'RunsStarted' });
 */
export const COUNTERSIGN_METRICS_NAMESPACE = 'Countersign';
