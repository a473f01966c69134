import type { Duration } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { invalidProp } from './validation-error.js';

/** What a duration prop must be: whole `unit`s within a range, and how to say so. */
export interface DurationRule {
  readonly unit: 'seconds' | 'days';
  readonly minimum: number;
  readonly maximum: number;
  /** A valid value, shown when the duration is not whole: `Duration.hours(12)`. */
  readonly example: string;
  /** The allowed range as the user writes it: `between Duration.days(1) and Duration.days(3650)`. */
  readonly range: string;
}

/**
 * Refuses a duration prop that is not a whole number of `rule.unit` or lies outside its range,
 * with an error that quotes the value and says what to use instead.
 *
 * @example
 * validateDurationProp(scope, 'retention.endedRuns', Duration.days(90), {
 *   unit: 'days', minimum: 1, maximum: 3650, example: 'Duration.days(30)', range: 'between Duration.days(1) and Duration.days(3650)',
 * });
 */
export function validateDurationProp(
  scope: IConstruct,
  name: string,
  duration: Duration,
  rule: DurationRule,
): void {
  let amount: number;
  try {
    amount =
      rule.unit === 'seconds' ? duration.toSeconds({ integral: true }) : duration.toDays({ integral: true });
  } catch {
    throw invalidProp(
      scope,
      `${name} ${duration.toHumanString()} is not a whole number of ${rule.unit}; use e.g. ${rule.example}.`,
    );
  }
  if (amount < rule.minimum || amount > rule.maximum) {
    throw invalidProp(scope, `${name} ${duration.toHumanString()} is out of range; use ${rule.range}.`);
  }
}
