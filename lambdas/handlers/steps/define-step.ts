import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import { isTransientAwsFault } from '../../adapters/aws-faults.js';
import { type InvocationFields, runInInvocationScope } from '../../adapters/invocation-scope.js';
import { ERROR_NAMES, type StateName, stepErrorName } from '../../contract/state-names.js';
import { CountersignError, nameErrorClass } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { TEXTS } from '../../core/texts.js';

/** A run id in a step's input. */
export const runIdSchema = z.string().check(z.minLength(1), z.maxLength(100));

/** The input of the steps that work on one turn of a run. */
export const stepInputSchema = z.object({
  runId: runIdSchema,
  turn: z.number().check(z.int(), z.nonnegative()),
});

/** What a step needs: its use case's named dependencies and a logger for the failures it maps. */
export type StepDependencies<UseCaseDependencies> = UseCaseDependencies & Pick<RunDependencies, 'logger'>;

/**
 * One state's Lambda step: parses its input, runs one use case, and turns a countersign error
 * into an error named `countersign.<code>` whose message is client-safe, so the state machine
 * can catch it and MarkFailed can show it.
 *
 * @example
 * const finish = defineStep(STATE_NAMES.finish, logger, z.object({ runId: runIdSchema }), (input) => finishRun(dependencies, input));
 */
export function defineStep<Schema extends zc.$ZodType, Output>(
  stateName: StateName,
  logger: Logger,
  schema: Schema,
  run: (input: z.infer<Schema>) => Promise<Output>,
): (event: unknown) => Promise<Output> {
  return async (event: unknown): Promise<Output> =>
    runInInvocationScope(collectStepInvocationLogFields(stateName, event), async () => {
      const parsed = z.safeParse(schema, event);
      if (!parsed.success)
        throw stepError(new CountersignError('bad-request', `${stateName}: malformed step input.`));
      try {
        return await run(parsed.data);
      } catch (error) {
        logger.warn('step failed', {
          state: stateName,
          runId: (parsed.data as { runId?: string }).runId,
          errorClass: nameErrorClass(error),
          code: error instanceof CountersignError ? error.code : undefined,
        });
        throw stepError(error);
      }
    });
}

/**
 * The identifiers a step's log lines carry; the execution id is the correlation id. Read
 * loosely (the input is validated after): the task token in the event is never copied.
 */
function collectStepInvocationLogFields(stateName: StateName, event: unknown): InvocationFields {
  const input = (typeof event === 'object' && event !== null ? event : {}) as Record<string, unknown>;
  const runId = typeof input.runId === 'string' ? input.runId : undefined;
  const executionId = typeof input.executionId === 'string' ? input.executionId : undefined;
  return {
    correlationId: executionId ?? runId ?? 'unknown',
    operation: stateName,
    ...(runId === undefined ? {} : { runId }),
    ...(executionId === undefined ? {} : { executionId }),
    ...(typeof input.turn === 'number' ? { turn: input.turn } : {}),
  };
}

/**
 * An error the state machine can route on by name, carrying only a client-safe message. A
 * transient AWS fault is `countersign.unavailable` however it arrived, so the workflow retries it.
 */
export function stepError(error: unknown): Error {
  if (error instanceof CountersignError) {
    const safe = new Error(error.expose ? error.message : 'Internal error.');
    safe.name = stepErrorName(error.code);
    return safe;
  }
  if (isTransientAwsFault(error)) {
    const transient = new Error(TEXTS.serviceUnavailable);
    transient.name = ERROR_NAMES.unavailable;
    return transient;
  }
  const generic = new Error('Internal error.');
  generic.name = ERROR_NAMES.internal;
  return generic;
}
