import type { Configuration } from '../configurations.js';
import { CountersignError } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { Clock, Logger, Metrics, RunRepository } from '../ports.js';
import { TERMINAL_STATUSES } from '../run-record.js';
import { TEXTS } from '../texts.js';
import { PRINCIPAL_QUOTA_DEFAULTS, type PrincipalQuotas, type QuotaName } from './principal-quotas.js';
import type { QuotaStore, StartedRun, TakenLease } from './quota-store.js';

/** The per-minute quotas count in fixed windows of this length. */
export const QUOTA_WINDOW_SECONDS = 60;
/**
 * How long an event stream holds its slot: the events function's timeout (90 s) and a margin.
 * A stream ends long before (it follows a run for 60 s) and gives the slot back; one whose
 * function crashed frees it when the lease ends.
 */
export const EVENT_STREAM_LEASE_SECONDS = 120;
/** When a principal at its waiting-runs limit may try again: a decision is someone else's to make. */
export const WAITING_RUNS_RETRY_AFTER_SECONDS = 60;
/** How long a started run is remembered at most (DynamoDB TTL): longer than any run waits. */
const STARTED_RUN_MEMORY_SECONDS = 90 * 86_400;

/** What enforcing a quota needs; without `quotas` no quota is enforced (a harness without the store). */
export interface QuotaDependencies {
  quotas?: QuotaStore;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  settings?: { principalQuotas?: PrincipalQuotas };
}

/**
 * Before a run starts: the principal's waiting runs (deployment-wide and of this configuration)
 * and the runs started this minute (likewise) must be below their limits, else a 429 with
 * `Retry-After`. The started-runs count is only read when it could be at the limit: then each
 * run is looked up, and those that ended are forgotten.
 *
 * @example
 * await enforceRunStartQuotas(dependencies, principal, configuration);
 */
export async function enforceRunStartQuotas(
  dependencies: QuotaDependencies & { runs: Pick<RunRepository, 'getRunRecord'> },
  principal: UserProfile,
  configuration: Pick<Configuration, 'configurationId' | 'quotas'>,
): Promise<void> {
  const { quotas } = dependencies;
  if (quotas === undefined) return;
  const limits = limitsOf(dependencies);
  const own = configuration.quotas ?? {};
  await enforceWaitingRuns(dependencies, quotas, principal.userId, configuration.configurationId, {
    all: limits.waitingRuns,
    ...(own.waitingRuns === undefined ? {} : { configuration: own.waitingRuns }),
  });
  await countInWindows(dependencies, quotas, principal.userId, 'runs-started', {
    deployment: limits.runsStartedPerMinute,
    configuration: own.runsStartedPerMinute,
    configurationId: configuration.configurationId,
  });
}

/**
 * Remembers a run the principal is starting, so the waiting-runs quota can find it. Written
 * before the run itself: a run whose creation failed is forgotten at the next check.
 */
export async function recordStartedRun(
  dependencies: QuotaDependencies,
  principal: UserProfile,
  run: StartedRun,
): Promise<void> {
  if (dependencies.quotas === undefined) return;
  const nowSeconds = Math.floor(dependencies.clock.now().getTime() / 1000);
  await dependencies.quotas.recordStartedRun(principal.userId, run, nowSeconds + STARTED_RUN_MEMORY_SECONDS);
}

/** Before a completion or translation: the principal's completions this minute, deployment-wide and of the configuration. */
export async function enforceCompletionQuota(
  dependencies: QuotaDependencies,
  principal: UserProfile,
  configuration: Pick<Configuration, 'configurationId' | 'quotas'>,
): Promise<void> {
  const { quotas } = dependencies;
  if (quotas === undefined) return;
  await countInWindows(dependencies, quotas, principal.userId, 'completions', {
    deployment: limitsOf(dependencies).completionsPerMinute,
    configuration: configuration.quotas?.completionsPerMinute,
    configurationId: configuration.configurationId,
  });
}

/**
 * Before an event stream starts: one of the principal's stream slots, given back with
 * {@link releaseEventStream} when the stream ends. `undefined` when quotas are not enforced.
 */
export async function takeEventStream(
  dependencies: QuotaDependencies,
  principal: UserProfile,
  leaseId: string,
): Promise<TakenLease | undefined> {
  const { quotas } = dependencies;
  if (quotas === undefined) return undefined;
  const nowSeconds = Math.floor(dependencies.clock.now().getTime() / 1000);
  const outcome = await quotas.takeLease({
    principalId: principal.userId,
    leaseId,
    limit: limitsOf(dependencies).openEventStreams,
    nowSeconds,
    endsAtSeconds: nowSeconds + EVENT_STREAM_LEASE_SECONDS,
  });
  if (outcome.kind === 'taken') return outcome.lease;
  throw refuse(dependencies, 'open-event-streams', outcome.freeAtSeconds - nowSeconds);
}

/** Gives an event stream's slot back; a failure only costs the slot until its lease ends. */
export async function releaseEventStream(
  dependencies: QuotaDependencies,
  lease: TakenLease | undefined,
): Promise<void> {
  if (lease === undefined || dependencies.quotas === undefined) return;
  await dependencies.quotas.releaseLease(lease).catch(() => {
    dependencies.logger.warn('event stream slot not released; it frees when its lease ends');
  });
}

function limitsOf(dependencies: QuotaDependencies): PrincipalQuotas {
  return dependencies.settings?.principalQuotas ?? PRINCIPAL_QUOTA_DEFAULTS;
}

async function enforceWaitingRuns(
  dependencies: QuotaDependencies & { runs: Pick<RunRepository, 'getRunRecord'> },
  quotas: QuotaStore,
  principalId: string,
  configurationId: string,
  limits: { all: number; configuration?: number },
): Promise<void> {
  const started = await quotas.listStartedRuns(principalId);
  const ofConfiguration = (runs: readonly StartedRun[]) =>
    runs.filter((run) => run.configurationId === configurationId).length;
  const mayBeOver = (runs: readonly StartedRun[]) =>
    runs.length >= limits.all ||
    (limits.configuration !== undefined && ofConfiguration(runs) >= limits.configuration);
  // Started runs bound waiting runs from above: below the limit, nothing is looked up.
  if (!mayBeOver(started)) return;
  const records = await Promise.all(started.map((run) => dependencies.runs.getRunRecord(run.runId)));
  const ended = started.filter((_run, index) => {
    const record = records[index];
    return record === undefined || TERMINAL_STATUSES.has(record.status);
  });
  if (ended.length > 0) {
    await quotas.forgetStartedRuns(
      principalId,
      ended.map((run) => run.runId),
    );
  }
  const waiting = started.filter((_run, index) => records[index]?.status === 'waiting');
  if (mayBeOver(waiting)) throw refuse(dependencies, 'waiting-runs', WAITING_RUNS_RETRY_AFTER_SECONDS);
}

/**
 * One event counted against the configuration's own limit (when it sets one) and then the
 * deployment's. The narrower counter goes first: an event it refuses costs the deployment's
 * count nothing, so one tight configuration never uses up a principal's other work.
 */
async function countInWindows(
  dependencies: QuotaDependencies,
  quotas: QuotaStore,
  principalId: string,
  quota: 'runs-started' | 'completions',
  limits: { deployment: number; configuration: number | undefined; configurationId: string },
): Promise<void> {
  if (limits.configuration !== undefined) {
    await countOrRefuse(
      dependencies,
      quotas,
      principalId,
      quota,
      limits.configuration,
      limits.configurationId,
    );
  }
  await countOrRefuse(dependencies, quotas, principalId, quota, limits.deployment);
}

async function countOrRefuse(
  dependencies: QuotaDependencies,
  quotas: QuotaStore,
  principalId: string,
  quota: 'runs-started' | 'completions',
  limit: number,
  configurationId?: string,
): Promise<void> {
  const nowSeconds = Math.floor(dependencies.clock.now().getTime() / 1000);
  const windowStartSeconds = nowSeconds - (nowSeconds % QUOTA_WINDOW_SECONDS);
  const outcome = await quotas.countInWindow({
    principalId,
    counter: configurationId === undefined ? quota : `${quota}#${configurationId}`,
    windowStartSeconds,
    windowSeconds: QUOTA_WINDOW_SECONDS,
    limit,
  });
  if (outcome.kind === 'over-limit') {
    throw refuse(dependencies, quota, windowStartSeconds + QUOTA_WINDOW_SECONDS - nowSeconds);
  }
}

/** The 429 of a quota, counted (`QuotaRefusals` by `quota`) and logged without the principal's data. */
function refuse(
  dependencies: QuotaDependencies,
  quota: QuotaName,
  retryAfterSeconds: number,
): CountersignError {
  dependencies.metrics.count('QuotaRefusals', 1, { quota });
  dependencies.logger.info('quota reached', { quota });
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new CountersignError('too-many-requests', TEXTS.quotaReached(quota, seconds), {
    retryAfterSeconds: seconds,
  });
}
