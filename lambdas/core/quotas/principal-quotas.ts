import * as z from 'zod/mini';

/**
 * What one principal (a signed-in user) may use, so that one account cannot crowd out the
 * others (issue #30: one editor started 140 runs in 6 s, one token held 20 event streams open).
 * The deployment sets them (the construct's `quotas` prop, COUNTERSIGN_PRINCIPAL_QUOTAS); a
 * configuration may set lower ones for its own runs and completions, never higher.
 */
export interface PrincipalQuotas {
  /** Runs a principal may start per minute (POST /runs), every configuration together. */
  readonly runsStartedPerMinute: number;
  /** Runs of a principal that may wait for a decision at once (each is a card in every inbox). */
  readonly waitingRuns: number;
  /** Event streams (GET /runs/{id}/events) a principal may hold open at once. */
  readonly openEventStreams: number;
  /** Completions and translations a principal may ask for per minute. */
  readonly completionsPerMinute: number;
}

/** The quotas by name: the `quota` dimension of `QuotaRefusals`. */
export const QUOTA_NAMES = ['runs-started', 'waiting-runs', 'open-event-streams', 'completions'] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];

/**
 * Sized for people and their scripts, not for floods: an editor starting a run every few
 * seconds, an inbox and a run view or two open, a completion a second. The events endpoint has
 * 10 reserved executions for everyone (`reservedConcurrency.events`): one principal holds at
 * most 3 of them.
 */
export const PRINCIPAL_QUOTA_DEFAULTS: PrincipalQuotas = {
  runsStartedPerMinute: 20,
  waitingRuns: 25,
  openEventStreams: 3,
  completionsPerMinute: 60,
};

/** The largest value of any quota: far above use, below what a counter item could mean. */
export const PRINCIPAL_QUOTA_MAXIMUM = 100_000;

const quotaValue = z.number().check(z.int(), z.gte(1), z.lte(PRINCIPAL_QUOTA_MAXIMUM));

/** The deployment's quotas as the construct writes them (every key optional: the defaults fill in). */
export const principalQuotasSchema = z.pipe(
  z.strictObject({
    runsStartedPerMinute: z.optional(quotaValue),
    waitingRuns: z.optional(quotaValue),
    openEventStreams: z.optional(quotaValue),
    completionsPerMinute: z.optional(quotaValue),
  }),
  z.transform((given): PrincipalQuotas => ({ ...PRINCIPAL_QUOTA_DEFAULTS, ...withoutUndefined(given) })),
);

/** A configuration's own, lower limits for its runs and completions (open streams are per principal only). */
export const configurationQuotasSchema = z.strictObject({
  runsStartedPerMinute: z.optional(quotaValue),
  waitingRuns: z.optional(quotaValue),
  completionsPerMinute: z.optional(quotaValue),
});
export type ConfigurationQuotas = z.infer<typeof configurationQuotasSchema>;

function withoutUndefined<Value extends object>(value: Value): Partial<Value> {
  return Object.fromEntries(
    Object.entries(value).filter(([, entry]) => entry !== undefined),
  ) as Partial<Value>;
}
