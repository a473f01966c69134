import { Duration } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { COUNTERSIGN_METRICS_NAMESPACE, type MetricName } from '../lambdas/core/metric-names.js';

/** How one of countersign's own metrics is read. */
export interface ApplicationMetricOptions {
  /** Dimensions besides `service` (`outcome`, `gate`). @default - `service` only */
  readonly dimensions?: Record<string, string>;
  /** @default 'Sum' */
  readonly statistic?: string;
  /** @default - Duration.minutes(5) */
  readonly period?: Duration;
  /** @default - CloudWatch's own label */
  readonly label?: string;
}

/** Reads one of countersign's own metrics of this deployment (the alarms and the dashboard). */
export type ApplicationMetricReader = (name: MetricName, options?: ApplicationMetricOptions) => Metric;

/**
 * A reader of countersign's own metrics, with a deployment's `service` dimension: the one the
 * Lambdas' metrics carry (POWERTOOLS_SERVICE_NAME), so two deployments in one account stay apart.
 *
 * @example
 * const metric = createApplicationMetricReader('countersign');
 * metric('PauseToDecision', { statistic: 'p90' });
 */
export function createApplicationMetricReader(serviceName: string): ApplicationMetricReader {
  return (name, options = {}) =>
    new Metric({
      namespace: COUNTERSIGN_METRICS_NAMESPACE,
      metricName: name,
      dimensionsMap: { service: serviceName, ...options.dimensions },
      statistic: options.statistic ?? 'Sum',
      period: options.period ?? Duration.minutes(5),
      ...(options.label === undefined ? {} : { label: options.label }),
    });
}
