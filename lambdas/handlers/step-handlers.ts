import * as z from 'zod';
import { type InvocationFields, runInInvocationScope } from '../adapters/invocation-scope.js';
import { CountersignError, describeErrorClass } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
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

/** What a step needs: its use case's dependencies and a logger for the failures it maps. */
type StepDependencies<UseCase extends (dependencies: never, ...rest: never[]) => unknown> =
  Parameters<UseCase>[0] & Pick<RunDependencies, 'logger'>;

/**
 * One state's Lambda step: parses its input, runs one use case, and turns a countersign error
 * into an error named `countersign.<code>` whose message is client-safe, so the state machine
 * can catch it and MarkFailed can show it.
 */
function defineStep<Schema extends z.ZodType, Output>(
  stateName: string,
  logger: Logger,
  schema: Schema,
  run: (input: z.infer<Schema>) => Promise<Output>,
): (event: unknown) => Promise<Output> {
  return async (event: unknown): Promise<Output> =>
    runInInvocationScope(describeStepInvocation(stateName, event), async () => {
      const parsed = schema.safeParse(event);
      if (!parsed.success)
        throw stepError(new CountersignError('bad-request', `${stateName}: malformed step input.`));
      try {
        return await run(parsed.data);
      } catch (error) {
        logger.warn('step failed', {
          state: stateName,
          runId: (parsed.data as { runId?: string }).runId,
          errorClass: describeErrorClass(error),
          code: error instanceof CountersignError ? error.code : undefined,
        });
        throw stepError(error);
      }
    });
}

// One factory per state, each asking only for what its use case reads, so each Lambda bundles
// only the adapters it uses (Prepare and the end states need no sealer and no model).

/** The `Prepare` step. */
export function createPrepareStep(dependencies: StepDependencies<typeof prepareRun>) {
  return defineStep(
    'Prepare',
    dependencies.logger,
    z.object({ runId, executionId: z.string().min(1) }),
    (input) => prepareRun(dependencies, input),
  );
}

/** The `ModelTurn` step. */
export function createModelTurnStep(dependencies: StepDependencies<typeof takeModelTurn>) {
  return defineStep('ModelTurn', dependencies.logger, stepInput, (input) =>
    takeModelTurn(dependencies, input),
  );
}

/** The `AwaitApproval` step (`lambda:invoke.waitForTaskToken`): the approval scan. */
export function createAwaitApprovalStep(dependencies: StepDependencies<typeof awaitApproval>) {
  return defineStep(
    'AwaitApproval',
    dependencies.logger,
    stepInput.extend({ taskToken: z.string().min(1) }),
    async (input) => {
      await awaitApproval(dependencies, input);
      return {};
    },
  );
}

/** The `ExecuteTools` step. */
export function createExecuteToolsStep(dependencies: StepDependencies<typeof executeTools>) {
  return defineStep('ExecuteTools', dependencies.logger, stepInput, (input) =>
    executeTools(dependencies, input),
  );
}

/** The `RecordRejection` step. */
export function createRecordRejectionStep(dependencies: StepDependencies<typeof recordRejection>) {
  return defineStep('RecordRejection', dependencies.logger, stepInput, (input) =>
    recordRejection(dependencies, input),
  );
}

/** The `Finish` step. */
export function createFinishStep(dependencies: StepDependencies<typeof finishRun>) {
  return defineStep('Finish', dependencies.logger, z.object({ runId }), async (input) => {
    await finishRun(dependencies, input);
    return { runId: input.runId };
  });
}

/** The `MarkFailed` step. */
export function createMarkFailedStep(dependencies: StepDependencies<typeof markRunFailed>) {
  return defineStep(
    'MarkFailed',
    dependencies.logger,
    z.object({
      runId,
      failure: z.object({ Error: z.string().optional(), Cause: z.string().optional() }).optional(),
    }),
    async (input) => {
      await markRunFailed(dependencies, input);
      return { runId: input.runId };
    },
  );
}

/** The `MarkExpired` step. */
export function createMarkExpiredStep(dependencies: StepDependencies<typeof markRunExpired>) {
  return defineStep('MarkExpired', dependencies.logger, z.object({ runId }).loose(), async (input) => {
    await markRunExpired(dependencies, { runId: input.runId });
    return { runId: input.runId };
  });
}

/**
 * The state machine's Lambda steps, keyed by the state names of the ASL (the local runner
 * keys its handlers the same way).
 */
export function createStepHandlers(dependencies: RunDependencies) {
  return {
    Prepare: createPrepareStep(dependencies),
    ModelTurn: createModelTurnStep(dependencies),
    AwaitApproval: createAwaitApprovalStep(dependencies),
    ExecuteTools: createExecuteToolsStep(dependencies),
    RecordRejection: createRecordRejectionStep(dependencies),
    Finish: createFinishStep(dependencies),
    MarkFailed: createMarkFailedStep(dependencies),
    MarkExpired: createMarkExpiredStep(dependencies),
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
