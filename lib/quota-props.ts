import type { IConstruct } from 'constructs';
import {
  PRINCIPAL_QUOTA_DEFAULTS,
  PRINCIPAL_QUOTA_MAXIMUM,
  type PrincipalQuotas,
} from '../lambdas/core/quotas/principal-quotas.js';
import { invalidProp } from './validation-error.js';

/**
 * What one signed-in user may use, so that one account (or one leaked token) cannot crowd out
 * everyone else. Above a limit the API answers 429 with `Retry-After` and counts
 * `QuotaRefusals`. A configuration may set lower limits for its own runs and completions (its
 * `quotas`), never higher. See docs/runbook.md, "Quotas".
 */
export interface CountersignQuotas {
  /**
   * Runs a user may start per minute (POST /runs), every configuration together.
   *
   * @default 20
   */
  readonly runsStartedPerMinute?: number;
  /**
   * Runs of a user that may wait for a decision at once; each is a card in every approver's inbox.
   *
   * @default 25
   */
  readonly waitingRuns?: number;
  /**
   * Event streams (GET /runs/{id}/events) a user may hold open at once; every stream holds one
   * of the events function's reserved executions (`reservedConcurrency.events`) while it lasts.
   *
   * @default 3
   */
  readonly openEventStreams?: number;
  /**
   * Completions and translations a user may ask for per minute.
   *
   * @default 60
   */
  readonly completionsPerMinute?: number;
}

/** The quotas with their defaults, or an error that quotes the bad value and says how to fix it. */
export function resolveQuotas(scope: IConstruct, quotas: CountersignQuotas | undefined): PrincipalQuotas {
  const resolved = { ...PRINCIPAL_QUOTA_DEFAULTS };
  for (const name of Object.keys(PRINCIPAL_QUOTA_DEFAULTS) as Array<keyof PrincipalQuotas>) {
    const value = quotas?.[name];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1 || value > PRINCIPAL_QUOTA_MAXIMUM) {
      throw invalidProp(
        scope,
        `quotas.${name} ${JSON.stringify(value)} is invalid; use a whole number between 1 and ${PRINCIPAL_QUOTA_MAXIMUM} (default ${PRINCIPAL_QUOTA_DEFAULTS[name]}).`,
      );
    }
    resolved[name] = value;
  }
  return resolved;
}
