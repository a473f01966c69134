import * as z from 'zod/mini';
import { type Configuration, renderPrompt, type Task } from '../configurations.js';
import { CountersignError, isCountersignError, nameErrorClass } from '../errors.js';
import { requireGrant, type UserProfile } from '../identity.js';
import { MAXIMUM_RUN_INPUT_CHARACTERS } from '../limits.js';
import type { Message } from '../model.js';
import { applyPolicyFloor, type PolicyFloor } from '../policy/policy-floor.js';
import { mayStartWith } from '../policy/start-access.js';
import type { PrincipalSource } from '../principal.js';
import { enforceRunStartQuotas, recordStartedRun } from '../quotas/enforce-quotas.js';
import type { RunDependencies } from '../run-dependencies.js';
import { RUN_RECORD_SCHEMA_VERSION, type RunRecord } from '../run-record.js';
import { sealJson } from '../sealed-json.js';
import { composeRunSkills } from '../skills/compose-run-skills.js';
import { injectIntoTranscript } from '../skills/inject-skills.js';
import { TEXTS } from '../texts.js';
import { requireUserRecord } from './require-user-record.js';
import { RUN_STATE_SCHEMA_VERSION, type RunState } from './run-state.js';

export const startRunRequestSchema = z
  .strictObject({
    taskId: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
    configurationId: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
    input: z.string().check(z.minLength(1), z.maxLength(MAXIMUM_RUN_INPUT_CHARACTERS)),
  })
  .check(
    z.refine(
      (body: { taskId?: string; configurationId?: string }) =>
        (body.taskId === undefined) !== (body.configurationId === undefined),
      { message: 'give exactly one of "taskId" or "configurationId"', path: ['taskId'] },
    ),
  );
export type StartRunRequest = z.infer<typeof startRunRequestSchema>;

export type StartRunOutcome = { kind: 'started'; runId: string; status: 'running' };

/** What starting a run reads and writes; skills, settings and quotas apply when composed. */
export type StartRunDependencies = Pick<
  RunDependencies,
  'runs' | 'sealer' | 'configurations' | 'executions' | 'clock' | 'newId' | 'logger' | 'metrics'
> &
  Partial<Pick<RunDependencies, 'skills' | 'settings' | 'quotas'>>;

/**
 * Starts a run of a task or a configuration for the signed-in user, who becomes the run's
 * acting user: every tool of the run authorises against them, never an ambient identity.
 */
export async function startRun(
  dependencies: StartRunDependencies,
  principal: UserProfile,
  request: StartRunRequest,
  principalSource: PrincipalSource,
): Promise<StartRunOutcome> {
  requireGrant(principal, 'agent_run');
  requireUserRecord(principal, principalSource);
  const { configurations } = dependencies;
  const task = request.taskId === undefined ? undefined : await configurations.getTask(request.taskId);
  if (request.taskId !== undefined && !task) {
    throw new CountersignError('bad-request', `taskId: no task "${request.taskId}" exists.`, {
      field: 'taskId',
    });
  }
  const configurationId = task?.configurationId ?? request.configurationId ?? '';
  const configuration = await configurations.getConfiguration(configurationId);
  if (!configuration) {
    const field = task ? 'taskId' : 'configurationId';
    throw new CountersignError('bad-request', `${field}: no configuration "${configurationId}" exists.`, {
      field,
    });
  }

  // Who may use a configuration or task is data the admins set; a task's list narrows its
  // configuration's, never widens it.
  const refused = [
    ...(task && !mayStartWith(principal, task.startAccess) ? [`task "${task.taskId}"`] : []),
    ...(!mayStartWith(principal, configuration.startAccess)
      ? [`configuration "${configuration.configurationId}"`]
      : []),
  ];
  if (refused.length > 0) {
    dependencies.metrics.count('StartRefusals');
    throw new CountersignError('forbidden', TEXTS.startAccessRefused(refused.join(' and ')));
  }
  // Per-principal quotas after the access checks: a refused start costs no counter.
  await enforceRunStartQuotas(dependencies, principal, configuration);

  const runId = dependencies.newId();
  const now = dependencies.clock.now().toISOString();
  const prompt = task ? renderPrompt(task, request.input) : request.input;
  // Seed 003: skills go into the first user message once, at the start, so the block is part
  // of the sealed state every later turn sends; composition stays a pure function of the skills.
  const skills = await composeRunSkills(
    { ...dependencies, settings: dependencies.settings ?? {} },
    { runId, configuration, ...(task ? { task } : {}) },
  );
  const firstMessage: Message = { role: 'user', content: [{ type: 'text', text: prompt }] };
  const injection = injectIntoTranscript([firstMessage], skills?.block ?? '');
  if (injection.warning) dependencies.logger.warn('skills not injected: no user message', { runId });
  const state: RunState = {
    schemaVersion: RUN_STATE_SCHEMA_VERSION,
    runId,
    turn: 0,
    ...(configuration.systemPrompt ? { system: configuration.systemPrompt } : {}),
    transcript: injection.value,
    pendingCalls: [],
    actingUser: principal,
    request: request.input,
  };
  const record = newRunRecord({
    runId,
    owner: principal.userId,
    label: task?.label ?? configuration.label,
    configurationId: configuration.configurationId,
    ...(task ? { taskId: task.taskId } : {}),
    policy: computeRunPolicy(configuration, task, dependencies.settings?.policyFloor),
    now,
  });
  await recordStartedRun(dependencies, principal, { runId, configurationId: configuration.configurationId });
  await dependencies.runs.createRun(record, await sealJson(dependencies.sealer, 'run-state', runId, state));
  await startExecutionOrFail(dependencies, runId);
  dependencies.metrics.count('RunsStarted');
  dependencies.logger.info('run started', { runId, configurationId: configuration.configurationId });
  return { kind: 'started', runId, status: 'running' };
}

/**
 * Starts a created run's execution (named after the run, so a repeated start is harmless). A
 * run whose execution never started must not sit as "running" forever: it is marked failed.
 */
export async function startExecutionOrFail(
  dependencies: Pick<RunDependencies, 'runs' | 'executions' | 'clock' | 'logger'>,
  runId: string,
): Promise<void> {
  try {
    await dependencies.executions.start({ runId, executionName: runId });
  } catch (error) {
    const now = dependencies.clock.now().toISOString();
    await dependencies.runs.updateRun(
      runId,
      { status: 'failed', failureReason: TEXTS.internalFailure, endedAt: now, updatedAt: now },
      { expectStatus: ['running'] },
    );
    dependencies.logger.error('run execution did not start', {
      runId,
      errorClass: nameErrorClass(error),
    });
    // Step Functions throttled or failing: the client is told to start it again (503), not a 500.
    if (isCountersignError(error, 'unavailable'))
      throw new CountersignError('unavailable', TEXTS.runNotStarted, { cause: error });
    throw new CountersignError('internal', 'The run could not be started.', { cause: error });
  }
}

/**
 * The record of a run about to start, of any kind: running, at its first turn, in its first
 * execution.
 *
 * @example
 * const record = newRunRecord({ runId, owner, label, configurationId, policy, now });
 */
export function newRunRecord(
  fields: Pick<RunRecord, 'runId' | 'owner' | 'label' | 'configurationId' | 'policy'> &
    Partial<Pick<RunRecord, 'taskId' | 'kind'>> & { now: string },
): RunRecord {
  const { now, ...identity } = fields;
  return {
    schemaVersion: RUN_RECORD_SCHEMA_VERSION,
    ...identity,
    status: 'running',
    turn: 0,
    executionCount: 1,
    executionStartTurn: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The approval policy a run keeps for its whole life: its configuration's, raised to the
 * deployment's floor, where its cards go (a task routes them on its own when it names groups) and
 * where an unanswered card goes next (the configuration's escalation ladder).
 * Every kind of run takes it from here (a model run, an external one).
 *
 * @example
 * const policy = computeRunPolicy(configuration, undefined, settings.policyFloor);
 */
export function computeRunPolicy(
  configuration: Configuration,
  task: Task | undefined,
  floor: PolicyFloor | undefined,
): RunRecord['policy'] {
  const policy = applyPolicyFloor(
    {
      fourEyes: configuration.options.fourEyes,
      requiredApprovals: configuration.options.requiredApprovals,
      decisionGate: configuration.options.decisionGate,
    },
    floor,
  );
  return {
    ...policy,
    revealRejectionReason: configuration.options.revealRejectionReason,
    ...withApproverGroups(task?.approverGroups ?? configuration.approverGroups),
    ...(configuration.escalation === undefined ? {} : { escalation: configuration.escalation }),
  };
}

function withApproverGroups(groups: readonly string[] | undefined): { approverGroups?: string[] } {
  return groups === undefined ? {} : { approverGroups: [...new Set(groups)].sort() };
}
