import { Duration } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { invalidProp } from './validation-error.js';
import { WAITING_RUNS_PROBE_INTERVAL } from './waiting-runs-probe.js';

/** The thresholds of countersign's alarms; every one is documented in docs/runbook.md. */
export interface CountersignAlarmThresholds {
  /**
   * A run waiting for a decision longer than this raises `RunWaitingTooLong`.
   *
   * @default - Duration.hours(24)
   */
  readonly runWaitingLongerThan?: Duration;
  /**
   * The HTTP API's p99 latency over three 5-minute periods above this raises `ApiLatencyP99`.
   *
   * @default - Duration.seconds(5)
   */
  readonly apiLatencyP99?: Duration;
  /**
   * The share of previews that failed in a 15-minute window, in percent (0-100).
   *
   * @default - 20
   */
  readonly previewFailurePercent?: number;
  /**
   * The largest sealed state or approval card written, in bytes, that raises
   * `SealedStateNearItemLimit`. The default is where run state overflows to S3, 75 % of
   * DynamoDB's 400 KB item limit.
   *
   * @default - 300000
   */
  readonly sealedBytes?: number;
}

/** The defaults of {@link CountersignAlarmThresholds}. */
export const ALARM_THRESHOLD_DEFAULTS = {
  runWaitingLongerThan: Duration.hours(24),
  apiLatencyP99: Duration.seconds(5),
  previewFailurePercent: 20,
  sealedBytes: 300_000,
} as const;

/** The thresholds with every default applied; a value that would deploy a useless alarm throws. */
export function resolveAlarmThresholds(
  scope: IConstruct,
  thresholds: CountersignAlarmThresholds = {},
): Required<CountersignAlarmThresholds> {
  const resolved = { ...ALARM_THRESHOLD_DEFAULTS, ...withoutUndefined(thresholds) };
  if (resolved.runWaitingLongerThan.toSeconds() < WAITING_RUNS_PROBE_INTERVAL.toSeconds()) {
    throw invalidProp(
      scope,
      `alarmThresholds.runWaitingLongerThan ${resolved.runWaitingLongerThan.toHumanString()} is shorter than the probe interval; use at least ${WAITING_RUNS_PROBE_INTERVAL.toHumanString()}.`,
    );
  }
  const percent = resolved.previewFailurePercent;
  if (!Number.isFinite(percent) || percent < 0 || percent >= 100) {
    throw invalidProp(
      scope,
      `alarmThresholds.previewFailurePercent ${JSON.stringify(percent)} is invalid; use a percentage from 0 to below 100 (default ${ALARM_THRESHOLD_DEFAULTS.previewFailurePercent}).`,
    );
  }
  if (!Number.isInteger(resolved.sealedBytes) || resolved.sealedBytes < 1 || resolved.sealedBytes > 400_000) {
    throw invalidProp(
      scope,
      `alarmThresholds.sealedBytes ${JSON.stringify(resolved.sealedBytes)} is invalid; use whole bytes from 1 to 400000 (default ${ALARM_THRESHOLD_DEFAULTS.sealedBytes}).`,
    );
  }
  return resolved;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
