import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { InvalidToken, SFNClient, TaskDoesNotExist } from '@aws-sdk/client-sfn';
import { surfaceTransientFaults } from '../../lambdas/adapters/aws-faults.js';
import { EventBridgeRunNotifier } from '../../lambdas/adapters/event-bridge-run-notifier.js';
import { StepFunctionsRunExecutions } from '../../lambdas/adapters/step-functions-run-executions.js';
import type { AwaitingApprovalEvent, RunExecutions, RunNotifier } from '../../lambdas/core/ports.js';

/**
 * In-process fault seams on the AWS SDK clients (issue #29): a middleware on a client's own
 * `middlewareStack` fails one chosen command once, before it reached the service or after the
 * service applied it (its answer "lost"), so the code under test meets exactly the errors the
 * SDK would hand it.
 *
 * `layer` says where the fault sits: `after-sdk-retries` (the SDK's retries are spent: the code
 * sees the error, classified `unavailable` as in production), or `inside-sdk-retries` (the SDK's
 * own retry meets it, and retries the command: a conditional write retried after it applied
 * meets its own first write).
 */

// biome-ignore lint/suspicious/noExplicitAny: a middleware passes any command's arguments and output through.
type Handler = (args: any) => Promise<any>;
type Context = { commandName?: string };

/** The part of an AWS SDK v3 client the seams attach to. */
export interface SeamableClient {
  readonly middlewareStack: {
    addRelativeTo(
      middleware: (next: Handler, context: Context) => Handler,
      options: { name: string; relation: 'before' | 'after'; toMiddleware: string; override?: boolean },
    ): void;
    add(
      middleware: (next: Handler, context: Context) => Handler,
      options: { step: 'initialize'; name: string; override?: boolean; priority?: 'high' | 'normal' | 'low' },
    ): void;
    remove(name: string): boolean;
  };
}

export interface FaultPlan {
  /** The SDK command, as `PutItem`, `UpdateItem`, `SendTaskSuccess`, `PutEvents`. */
  readonly command: string;
  /** Which calls of it (their input, serialised): a run id, a sort key prefix. @default every call */
  readonly matching?: (input: string) => boolean;
  readonly when: 'before-applied' | 'after-applied';
  readonly layer?: 'after-sdk-retries' | 'inside-sdk-retries';
  /** Which matching call fails (1: the first). @default 1 */
  readonly nth?: number;
  /** Runs as the fault fires, before the error is thrown (a kill between steps, a racing decision). */
  readonly onFault?: () => Promise<void>;
}

export interface InjectedFault {
  /** How many times the fault fired (0 or 1). */
  fired(): number;
  /** Matching calls seen so far, faulted or not. */
  seen(): number;
  remove(): void;
}

let seamCount = 0;

/** A client's stack as the seams use it (each SDK client types its handlers its own way). */
function stackOf(client: unknown): SeamableClient['middlewareStack'] {
  return (client as SeamableClient).middlewareStack;
}

/** A throttling error as DynamoDB, Step Functions or EventBridge answers it (HTTP 400, retryable). */
export function throttlingError(): Error {
  return Object.assign(new Error('Rate exceeded'), {
    name: 'ThrottlingException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400, attempts: 1 },
    $retryable: { throttling: true },
  });
}

/** A service error as a 500 answer carries it: transient, retried by the SDK's standard strategy. */
export function serviceError(): Error {
  return Object.assign(new Error('We encountered an internal error. Please try again.'), {
    name: 'InternalServerError',
    $fault: 'server',
    $metadata: { httpStatusCode: 500, attempts: 1 },
  });
}

/**
 * Fails one call of `plan.command` once, as planned. After the SDK's retries the error is a
 * throttle (the client's classifier makes it `unavailable`); inside them a 500, which the SDK
 * retries at its default 100 ms base delay.
 *
 * @example
 * const fault = injectFault(runtime.dynamo.client, { command: 'PutItem', when: 'after-applied', matching: (input) => input.includes('DECISION#') });
 */
export function injectFault(client: SeamableClient, plan: FaultPlan): InjectedFault {
  seamCount += 1;
  const name = `faultSeam${seamCount}`;
  const nth = plan.nth ?? 1;
  let seen = 0;
  let fired = 0;
  const inside = plan.layer === 'inside-sdk-retries';
  client.middlewareStack.addRelativeTo(
    (next, context) => async (args) => {
      const command = (context.commandName ?? '').replace(/Command$/, '');
      if (command !== plan.command || fired > 0) return next(args);
      if (plan.matching && !plan.matching(JSON.stringify(args.input ?? args.request?.body ?? {}))) {
        return next(args);
      }
      seen += 1;
      if (seen !== nth) return next(args);
      fired += 1;
      if (plan.when === 'after-applied') await next(args);
      await plan.onFault?.();
      throw inside ? serviceError() : throttlingError();
    },
    inside
      ? { name, relation: 'after', toMiddleware: 'retryMiddleware', override: true }
      : { name, relation: 'after', toMiddleware: 'countersignTransientFaults', override: true },
  );
  return { fired: () => fired, seen: () => seen, remove: () => void client.middlewareStack.remove(name) };
}

/**
 * A real Step Functions client (its adapter, `StepFunctionsRunExecutions`, and its transient
 * fault classifier) whose SendTaskSuccess and SendTaskFailure reach `target` in this process
 * instead of AWS: a spent token answers `TaskDoesNotExist`, as the service does.
 *
 * @example
 * const sfn = stepFunctionsSeam(runtime.runner);
 * runtime.dependencies.executions.resume = (token, decision) => sfn.executions.resume(token, decision);
 */
export function stepFunctionsSeam(target: Pick<RunExecutions, 'resume'>): {
  client: SFNClient;
  executions: RunExecutions;
} {
  const client = surfaceTransientFaults(
    new SFNClient({ region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );
  stackOf(client).add(
    (_next, context) => async (args) => {
      const input = args.input as { taskToken: string };
      const command = context.commandName ?? '';
      const outcome = await target.resume(
        input.taskToken,
        command === 'SendTaskSuccessCommand' ? { kind: 'approve' } : { kind: 'reject' },
      );
      if (outcome.kind === 'token-spent') {
        throw new TaskDoesNotExist({
          message: 'Task does not exist anymore',
          $metadata: { httpStatusCode: 400 },
        });
      }
      return { output: { $metadata: { httpStatusCode: 200 } } };
    },
    { step: 'initialize', name: 'inProcessStepFunctions', priority: 'low' },
  );
  const executions = new StepFunctionsRunExecutions({
    client,
    stateMachineArn: 'arn:aws:states:local:000000000000:stateMachine:countersign',
  });
  return { client, executions };
}

/** `InvalidToken` as Step Functions answers a malformed token; exported for tests that need it. */
export const invalidTokenError = (): Error =>
  new InvalidToken({ message: 'Invalid token', $metadata: { httpStatusCode: 400 } });

/**
 * A real EventBridge client and notifier (`EventBridgeRunNotifier`) whose PutEvents lands in
 * `sent` in this process: each entry as EventBridge would have received it.
 *
 * @example
 * const events = eventBridgeSeam(); runtime.dependencies.notifier.runAwaitingApproval = (event) => events.notifier.runAwaitingApproval(event);
 */
export function eventBridgeSeam(): {
  client: EventBridgeClient;
  notifier: RunNotifier;
  sent: AwaitingApprovalEvent[];
} {
  const sent: AwaitingApprovalEvent[] = [];
  const client = surfaceTransientFaults(
    new EventBridgeClient({
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  stackOf(client).add(
    () => async (args) => {
      const entries = (args.input as { Entries: Array<{ Detail: string }> }).Entries;
      for (const entry of entries) sent.push(JSON.parse(entry.Detail) as AwaitingApprovalEvent);
      return {
        output: { FailedEntryCount: 0, Entries: [{ EventId: `event-${sent.length}` }], $metadata: {} },
      };
    },
    { step: 'initialize', name: 'inProcessEventBridge', priority: 'low' },
  );
  return { client, notifier: new EventBridgeRunNotifier({ client, eventBusName: 'local' }), sent };
}

export interface HeldCall {
  /** Resolves once the held call arrived (and waits at the seam). */
  entered(): Promise<void>;
  /** Lets it go on to the service, or fails it as a process that died right there would. */
  release(outcome?: 'proceed' | 'die'): void;
  remove(): void;
}

/**
 * Holds one call of `plan.command` at the seam (before it reaches the service) until released:
 * a step paused mid-way, so a test can act in between (decide while a pause is retried) or stop
 * the process there (a kill between steps). `die` fails the call without applying it.
 *
 * @example
 * const held = holdCall(runtime.dynamo.client, { command: 'BatchGetItem', matching, nth: 2 });
 * await held.entered(); ...; held.release();
 */
export function holdCall(
  client: SeamableClient,
  plan: Pick<FaultPlan, 'command' | 'matching' | 'nth'>,
): HeldCall {
  seamCount += 1;
  const name = `holdSeam${seamCount}`;
  const nth = plan.nth ?? 1;
  let seen = 0;
  const arrived = Promise.withResolvers<void>();
  const decided = Promise.withResolvers<'proceed' | 'die'>();
  stackOf(client).addRelativeTo(
    (next, context) => async (args) => {
      const command = (context.commandName ?? '').replace(/Command$/, '');
      if (command !== plan.command) return next(args);
      if (plan.matching && !plan.matching(JSON.stringify(args.input ?? {}))) return next(args);
      seen += 1;
      if (seen !== nth) return next(args);
      arrived.resolve();
      if ((await decided.promise) === 'die') {
        throw Object.assign(new Error('The process stopped here.'), { name: 'ProcessStopped' });
      }
      return next(args);
    },
    { name, relation: 'after', toMiddleware: 'countersignTransientFaults', override: true },
  );
  return {
    entered: () => arrived.promise,
    release: (outcome = 'proceed') => decided.resolve(outcome),
    remove: () => void stackOf(client).remove(name),
  };
}

/**
 * Stops a runtime while one of its steps is held at a seam, as a killed process would stop it:
 * the held call fails without applying, and nothing after it in that step runs.
 *
 * @example
 * await killWhileHeld(runtime, held); // then start a runtime on the same data
 */
export async function killWhileHeld(runtime: { stop(): Promise<void> }, held: HeldCall): Promise<void> {
  const stopping = runtime.stop();
  held.release('die');
  await stopping;
}

/**
 * The HTTP statuses a runtime answered 5xx with, read from its log (every 5xx writes one
 * `request failed` line): a fault test asserts that none was a 500.
 *
 * @example
 * expect(serverErrorStatuses(runtime.logLines)).not.toContain(500);
 */
export function serverErrorStatuses(logLines: readonly string[]): number[] {
  return logLines.flatMap((line) => {
    const entry = JSON.parse(line) as { message?: unknown; status?: unknown };
    return entry.message === 'request failed' && typeof entry.status === 'number' ? [entry.status] : [];
  });
}
