import * as z from 'zod';
import { type InvocationFields, runInInvocationScope } from '../adapters/invocation-scope.js';
import { CountersignError, describeErrorClass } from '../core/errors.js';
import { awaitApproval } from '../core/runs/await-approval.js';
import { finishRun, markRunExpired, markRunFailed } from '../core/runs/end-run.js';
import { executeTools } from '../core/runs/execute-tools.js';
import { prepareRun } from '../core/runs/prepare-run.js';
import { recordRejection } from '../core/runs/record-rejection.js';
import type { RunDependencies } from '../core/runs/run-dependencies.js';
import { takeModelTurn } from '../core/runs/take-model-turn.js';

const runId = z.string().min(1).max(100);
const turn = z.number().int().nonnegative();
const stepInput = z.object({ runId, turn });

/**
 * The state machine's Lambda steps, keyed by the state names of the ASL (the local runner
 * keys its handlers the same way). Each parses its input, runs one use case, and turns a
 * countersign error into an error named `countersign.<code>` whose message is client-safe, so
 * the state machine can catch it and MarkFailed can show it.
 */
export function createStepHandlers(dependencies: RunDependencies) {
  const step = <Schema extends z.ZodType, Output>(
    stateName: string,
    schema: Schema,
    run: (input: z.infer<Schema>) => Promise<Output>,
  ) => {
    return async (event: unknown): Promise<Output> =>
      runInInvocationScope(describeStepInvocation(stateName, event), async () => {
        const parsed = schema.safeParse(event);
        if (!parsed.success)
          throw stepError(new CountersignError('bad-request', `${stateName}: malformed step input.`));
        try {
          return await run(parsed.data);
        } catch (error) {
          dependencies.logger.warn('step failed', {
            state: stateName,
            runId: (parsed.data as { runId?: string }).runId,
            errorClass: describeErrorClass(error),
            code: error instanceof CountersignError ? error.code : undefined,
          });
          throw stepError(error);
        }
      });
  };
  return {
    Prepare: step('Prepare', z.object({ runId, executionId: z.string().min(1) }), (input) =>
      prepareRun(dependencies, input),
    ),
    ModelTurn: step('ModelTurn', stepInput, (input) => takeModelTurn(dependencies, input)),
    AwaitApproval: step(
      'AwaitApproval',
      stepInput.extend({ taskToken: z.string().min(1) }),
      async (input) => {
        await awaitApproval(dependencies, input);
        return {};
      },
    ),
    ExecuteTools: step('ExecuteTools', stepInput, (input) => executeTools(dependencies, input)),
    RecordRejection: step('RecordRejection', stepInput, (input) => recordRejection(dependencies, input)),
    Finish: step('Finish', z.object({ runId }), async (input) => {
      await finishRun(dependencies, input);
      return { runId: input.runId };
    }),
    MarkFailed: step(
      'MarkFailed',
      z.object({
        runId,
        failure: z.object({ Error: z.string().optional(), Cause: z.string().optional() }).optional(),
      }),
      async (input) => {
        await markRunFailed(dependencies, input);
        return { runId: input.runId };
      },
    ),
    MarkExpired: step('MarkExpired', z.object({ runId }).loose(), async (input) => {
      await markRunExpired(dependencies, { runId: input.runId });
      return { runId: input.runId };
    }),
  };
}

export type StepHandlers = ReturnType<typeof createStepHandlers>;

/**
 * The identifiers a step's log lines carry; the execution id is the correlation id. Read
 * loosely (the input is validated after): the task token in the event is never copied.
 */
function describeStepInvocation(stateName: string, event: unknown): InvocationFields {
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

/** An error the state machine can route on by name, carrying only a client-safe message. */
export function stepError(error: unknown): Error {
  if (error instanceof CountersignError) {
    const safe = new Error(error.expose ? error.message : 'Internal error.');
    safe.name = `countersign.${error.code}`;
    return safe;
  }
  const generic = new Error('Internal error.');
  generic.name = 'countersign.internal';
  return generic;
}
