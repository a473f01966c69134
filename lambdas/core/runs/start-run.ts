import * as z from 'zod';
import { renderPrompt } from '../configurations.js';
import { CountersignError } from '../errors.js';
import { hasGrant, type UserProfile } from '../identity.js';
import { TEXTS } from '../texts.js';
import type { RunDependencies } from './run-dependencies.js';
import type { RunRecord } from './run-record.js';
import { RUN_STATE_SCHEMA_VERSION, type RunState } from './run-state.js';
import { sealJson } from './sealed-json.js';

export const startRunRequestSchema = z
  .object({
    taskId: z.string().min(1).max(100).optional(),
    configurationId: z.string().min(1).max(100).optional(),
    input: z.string().min(1).max(100_000),
  })
  .strict()
  .refine((body) => (body.taskId === undefined) !== (body.configurationId === undefined), {
    message: 'give exactly one of "taskId" or "configurationId"',
    path: ['taskId'],
  });
export type StartRunRequest = z.infer<typeof startRunRequestSchema>;

export type StartRunOutcome = { kind: 'started'; runId: string; status: 'running' };

/**
 * Starts a run of a task or a configuration for the signed-in user, who becomes the run's
 * acting user: every tool of the run authorises against them, never an ambient identity.
 */
export async function startRun(
  dependencies: Pick<
    RunDependencies,
    'runs' | 'sealer' | 'configurations' | 'executions' | 'clock' | 'newId' | 'logger' | 'metrics'
  >,
  principal: UserProfile,
  request: StartRunRequest,
): Promise<StartRunOutcome> {
  if (!hasGrant(principal, 'agent_run'))
    throw new CountersignError('forbidden', TEXTS.grantRefused('agent_run'));
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

  const runId = dependencies.newId();
  const now = dependencies.clock.now().toISOString();
  const prompt = task ? renderPrompt(task, request.input) : request.input;
  const state: RunState = {
    schemaVersion: RUN_STATE_SCHEMA_VERSION,
    runId,
    turn: 0,
    ...(configuration.systemPrompt ? { system: configuration.systemPrompt } : {}),
    transcript: [{ role: 'user', content: [{ type: 'text', text: prompt }] }],
    pendingCalls: [],
    actingUser: principal,
  };
  const record: RunRecord = {
    runId,
    owner: principal.userId,
    label: task?.label ?? configuration.label,
    configurationId: configuration.configurationId,
    ...(task ? { taskId: task.taskId } : {}),
    status: 'running',
    turn: 0,
    executionCount: 1,
    executionStartTurn: 0,
    createdAt: now,
    updatedAt: now,
    policy: {
      fourEyes: configuration.options.fourEyes,
      revealRejectionReason: configuration.options.revealRejectionReason,
    },
  };
  await dependencies.runs.createRun(record, await sealJson(dependencies.sealer, 'run-state', runId, state));
  try {
    await dependencies.executions.start({ runId, executionName: runId });
  } catch (error) {
    // A run whose execution never started must not sit as "running" forever.
    await dependencies.runs.updateRun(
      runId,
      { status: 'failed', failureReason: TEXTS.internalFailure, endedAt: now, updatedAt: now },
      { expectStatus: ['running'] },
    );
    dependencies.logger.error('run execution did not start', { runId, errorClass: (error as Error)?.name });
    throw new CountersignError('internal', 'The run could not be started.', { cause: error });
  }
  dependencies.metrics.count('RunsStarted');
  dependencies.logger.info('run started', { runId, configurationId: configuration.configurationId });
  return { kind: 'started', runId, status: 'running' };
}
