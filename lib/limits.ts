import { Duration } from 'aws-cdk-lib';
import type { CfnFunction, Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { ENDED_RUN_RETENTION_DAYS_DEFAULT, THROTTLING_DEFAULTS } from '../lambdas/core/limits.js';
import { validateDurationProp } from './duration-prop.js';
import type { HandlerName } from './handler-names.js';
import { invalidProp } from './validation-error.js';

/** Rate and burst limits of the HTTP API's default stage. */
export interface CountersignThrottling {
  /**
   * Steady-state requests per second across the stage (every route), above which API Gateway
   * answers 429.
   *
   * @default 50
   */
  readonly rateLimit?: number;
  /**
   * Requests the stage accepts at once above the steady rate.
   *
   * @default 100
   */
  readonly burstLimit?: number;
}

/**
 * Reserved concurrency per function group: the most instances of each function that may run at
 * once, and as many taken out of the account's regional pool. A runaway (a retry storm, a
 * flood of requests) then throttles inside its group instead of starving everything else in
 * the account. A group left out is unreserved. Lambda refuses a deployment that would leave
 * less than 100 unreserved executions in the account, so a reservation needs an account quota of
 * at least its total plus 100: {@link RESERVED_CONCURRENCY_FOR_PRODUCTION} reserves 101 and needs
 * 201, more than a new account may start with (docs/runbook.md, "Production checklist").
 */
export interface CountersignReservedConcurrency {
  /**
   * Each of api-runs, api-inbox, api-decision, api-admin and api-generate.
   *
   * @default - unreserved
   */
  readonly api?: number;
  /**
   * Each function whose requests are held open: api-run-events, behind the public function URL
   * (each open stream holds one for up to 60 s), and api-external (each long poll of an external
   * run holds one for up to 25 s).
   *
   * @default - unreserved
   */
  readonly events?: number;
  /**
   * Each state machine step (prepare, model-turn, await-approval, execute-tools,
   * record-rejection, finish-run, mark-failed, mark-expired, record-external-decision,
   * notify-caller), and escalate-card, which a card's escalation schedule invokes. A throttled step
   * is retried by the state machine (or Scheduler).
   *
   * @default - unreserved
   */
  readonly steps?: number;
  /**
   * report-waiting-runs, the scheduled probe.
   *
   * @default - unreserved
   */
  readonly probe?: number;
}

/** How long data is kept; DynamoDB TTL and an S3 lifecycle rule remove it afterwards. */
export interface CountersignRetention {
  /**
   * How long an ended run (completed, failed or expired: its record, sealed state, i.e. the
   * transcript, and its closed approval card) is kept after it ended. Overflow objects are kept
   * this long plus the approval timeout and a day after they were written, which outlasts the
   * run item that points at them.
   *
   * @default Duration.days(90)
   */
  readonly endedRuns?: Duration;
  /**
   * How long a decision record (who approved or rejected what, and the card they saw) is kept
   * after it was made.
   *
   * @default - forever
   */
  readonly decisions?: Duration;
}

/** The function groups of {@link CountersignReservedConcurrency}. */
export type FunctionGroup = keyof CountersignReservedConcurrency;

/** The group each handler's reserved concurrency comes from. */
export const FUNCTION_GROUPS: Readonly<Record<HandlerName, FunctionGroup>> = {
  prepare: 'steps',
  'model-turn': 'steps',
  'await-approval': 'steps',
  'execute-tools': 'steps',
  'record-rejection': 'steps',
  'finish-run': 'steps',
  'mark-failed': 'steps',
  'mark-expired': 'steps',
  'record-external-decision': 'steps',
  'notify-caller': 'steps',
  'api-runs': 'api',
  'api-inbox': 'api',
  'api-decision': 'api',
  'api-admin': 'api',
  'api-generate': 'api',
  'api-run-events': 'events',
  'api-external': 'events',
  'report-waiting-runs': 'probe',
  // A card's escalation step, invoked by its schedule: a throttled one is retried by Scheduler.
  'escalate-card': 'steps',
};

/**
 * The production setting of `reservedConcurrency` (docs/runbook.md, "Production checklist"):
 * 5 for each API function, 10 for each function of long-held requests (the event stream, the
 * approval API's long poll), 5 for each state machine step and 1 for the probe, 101 in all.
 * Lambda keeps 100 of an account's concurrency unreserved, so this needs a concurrency quota of
 * at least {@link requiredAccountConcurrency} (201); the construct reserves nothing unless it
 * is set, so a first `cdk deploy` works on a new account as it comes.
 *
 * @example
 * new Countersign(this, 'Approvals', { reservedConcurrency: RESERVED_CONCURRENCY_FOR_PRODUCTION });
 */
export const RESERVED_CONCURRENCY_FOR_PRODUCTION: Readonly<Required<CountersignReservedConcurrency>> = {
  api: 5,
  events: 10,
  steps: 5,
  probe: 1,
};

/** What Lambda keeps unreserved in every account and region. */
export const UNRESERVED_CONCURRENCY_MINIMUM = 100;

/**
 * The account concurrency quota a reservation needs: every function's reservation, plus the 100
 * Lambda keeps unreserved.
 *
 * @example
 * requiredAccountConcurrency(RESERVED_CONCURRENCY_FOR_PRODUCTION); // 201
 */
export function requiredAccountConcurrency(reservation: CountersignReservedConcurrency): number {
  const reserved = Object.values(FUNCTION_GROUPS).reduce(
    (total, group) => total + (reservation[group] ?? 0),
    0,
  );
  return reserved + UNRESERVED_CONCURRENCY_MINIMUM;
}

/** The defaults of the limits, in one place for the construct, local mode and the tests. */
export const LIMIT_DEFAULTS = {
  throttling: { rateLimit: THROTTLING_DEFAULTS.rateLimit, burstLimit: THROTTLING_DEFAULTS.burstLimit },
  retention: { endedRuns: Duration.days(ENDED_RUN_RETENTION_DAYS_DEFAULT) },
} as const;

/** The limits with every default applied and every value checked. */
export interface ResolvedLimits {
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  readonly reservedConcurrency: Readonly<Record<FunctionGroup, number | undefined>>;
  readonly retention: { readonly endedRuns: Duration; readonly decisions?: Duration };
}

// API Gateway's account default is 10,000 requests per second and a burst of 5,000.
const MAXIMUM_RATE_LIMIT = 10_000;
const MAXIMUM_BURST_LIMIT = 5_000;
// The default regional concurrency of an account; a larger reservation cannot deploy anywhere by default.
const MAXIMUM_RESERVED_CONCURRENCY = 900;
// DynamoDB TTL reads epoch seconds; a day is the smallest retention worth the name.
const MINIMUM_RETENTION_DAYS = 1;
const MAXIMUM_RETENTION_DAYS = 3650;

/** Applies the defaults of the limit props and refuses values that would not deploy or not protect. */
export function resolveLimits(
  scope: IConstruct,
  props: {
    throttling?: CountersignThrottling;
    reservedConcurrency?: CountersignReservedConcurrency;
    retention?: CountersignRetention;
  },
): ResolvedLimits {
  const rateLimit = props.throttling?.rateLimit ?? LIMIT_DEFAULTS.throttling.rateLimit;
  if (!Number.isFinite(rateLimit) || rateLimit <= 0 || rateLimit > MAXIMUM_RATE_LIMIT) {
    throw invalidProp(
      scope,
      `throttling.rateLimit ${JSON.stringify(rateLimit)} is invalid; use requests per second above 0 and at most ${MAXIMUM_RATE_LIMIT} (default ${LIMIT_DEFAULTS.throttling.rateLimit}).`,
    );
  }
  const burstLimit = props.throttling?.burstLimit ?? LIMIT_DEFAULTS.throttling.burstLimit;
  if (!Number.isInteger(burstLimit) || burstLimit < 1 || burstLimit > MAXIMUM_BURST_LIMIT) {
    throw invalidProp(
      scope,
      `throttling.burstLimit ${JSON.stringify(burstLimit)} is invalid; use a whole number of requests between 1 and ${MAXIMUM_BURST_LIMIT} (default ${LIMIT_DEFAULTS.throttling.burstLimit}).`,
    );
  }

  const reserved = props.reservedConcurrency ?? {};
  const reservedConcurrency = {} as Record<FunctionGroup, number | undefined>;
  for (const group of Object.keys(RESERVED_CONCURRENCY_FOR_PRODUCTION) as FunctionGroup[]) {
    // A group left out (or set to undefined) is unreserved.
    const value = reserved[group];
    if (
      value !== undefined &&
      (!Number.isInteger(value) || value < 1 || value > MAXIMUM_RESERVED_CONCURRENCY)
    ) {
      throw invalidProp(
        scope,
        `reservedConcurrency.${group} ${JSON.stringify(value)} is invalid; use a whole number between 1 and ${MAXIMUM_RESERVED_CONCURRENCY}, or leave the group out to keep it unreserved (production setting ${RESERVED_CONCURRENCY_FOR_PRODUCTION[group]}).`,
      );
    }
    reservedConcurrency[group] = value;
  }

  const endedRuns = props.retention?.endedRuns ?? LIMIT_DEFAULTS.retention.endedRuns;
  validateRetention(scope, 'endedRuns', endedRuns);
  const decisions = props.retention?.decisions;
  if (decisions !== undefined) validateRetention(scope, 'decisions', decisions);

  return {
    throttling: { rateLimit, burstLimit },
    reservedConcurrency,
    retention: decisions === undefined ? { endedRuns } : { endedRuns, decisions },
  };
}

function validateRetention(scope: IConstruct, name: keyof CountersignRetention, retention: Duration): void {
  validateDurationProp(scope, `retention.${name}`, retention, {
    unit: 'days',
    minimum: MINIMUM_RETENTION_DAYS,
    maximum: MAXIMUM_RETENTION_DAYS,
    example: 'Duration.days(30)',
    range: `between Duration.days(${MINIMUM_RETENTION_DAYS}) and Duration.days(${MAXIMUM_RETENTION_DAYS})`,
  });
}

/**
 * How long S3 keeps an overflow object after it was written: the ended-run retention, plus the
 * longest a run can wait between its last state write and its end (the approval timeout), plus
 * a day for the steps around it and DynamoDB TTL's own delay.
 */
export function overflowExpiration(
  retention: ResolvedLimits['retention'],
  approvalTimeout: Duration,
): Duration {
  const days = retention.endedRuns.toDays() + Math.ceil(approvalTimeout.toSeconds() / 86_400) + 1;
  return Duration.days(days);
}

/** Sets each function's reserved concurrency from its group (none when the group opts out). */
export function applyReservedConcurrency(
  functions: Readonly<Record<HandlerName, LambdaFunction>>,
  reservedConcurrency: ResolvedLimits['reservedConcurrency'],
): void {
  for (const [name, handler] of Object.entries(functions) as Array<[HandlerName, LambdaFunction]>) {
    const reserved = reservedConcurrency[FUNCTION_GROUPS[name]];
    if (reserved === undefined) continue;
    (handler.node.defaultChild as CfnFunction).reservedConcurrentExecutions = reserved;
  }
}
