import type { CountersignAlarmName } from '../../lib/alarms.js';
import type { SynthesizedStack } from './synthesize-test-stack.js';

export interface AlarmProperties {
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

export const SERVICE = 'Countersign-Countersign';

/** The alarms of a synthesized stack by the runbook name, read from the logical id. */
export function alarmsOf(synthesized: SynthesizedStack): Record<CountersignAlarmName, AlarmProperties> {
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
