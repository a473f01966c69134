import {
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidToken,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
} from '@aws-sdk/client-sfn';
import { ERROR_NAMES } from '../contract/state-names.js';
import type { RunExecutions } from '../core/ports.js';

/** What a stopped execution's history says, by why it was stopped: fixed texts only. */
const STOP_REASONS = {
  cancelled: { error: ERROR_NAMES.cancelled, cause: 'Cancelled through the API.' },
  'sealed-state-rejected': {
    error: ERROR_NAMES.sealedStateRejected,
    cause: 'The approval card of this run could not be opened.',
  },
} as const;

/**
 * `RunExecutions` on AWS Step Functions. The task token is passed to the SDK and nowhere
 * else: not logged, not put in an error.
 */
export class StepFunctionsRunExecutions implements RunExecutions {
  public constructor(private readonly options: { client: SFNClient; stateMachineArn?: string }) {}

  public async start(input: { runId: string; executionName: string }): Promise<void> {
    const { stateMachineArn } = this.options;
    if (!stateMachineArn) throw new Error('COUNTERSIGN_STATE_MACHINE_ARN is not set for this function.');
    try {
      await this.options.client.send(
        new StartExecutionCommand({
          stateMachineArn,
          name: input.executionName,
          input: JSON.stringify({ runId: input.runId }),
        }),
      );
    } catch (error) {
      // Same name, same input: Step Functions' own idempotency for a retried start.
      if (!(error instanceof ExecutionAlreadyExists)) throw error;
    }
  }

  public async stopExecution(input: {
    runId: string;
    executionId?: string;
    because?: 'cancelled' | 'sealed-state-rejected';
  }): Promise<void> {
    const executionArn = input.executionId ?? this.firstExecutionArn(input.runId);
    const { error, cause } = STOP_REASONS[input.because ?? 'cancelled'];
    try {
      // The cause is fixed text: who cancelled and why stay in DynamoDB, out of the history.
      await this.options.client.send(new StopExecutionCommand({ executionArn, error, cause }));
    } catch (error) {
      // Never started, or already gone: there is nothing left to stop.
      if (!(error instanceof ExecutionDoesNotExist)) throw error;
    }
  }

  /** A run's first execution is named after the run (see start-run.ts). */
  private firstExecutionArn(runId: string): string {
    const { stateMachineArn } = this.options;
    if (!stateMachineArn) throw new Error('COUNTERSIGN_STATE_MACHINE_ARN is not set for this function.');
    const [prefix, name] = stateMachineArn.split(':stateMachine:');
    return `${prefix}:execution:${name}:${runId}`;
  }

  public async resume(
    taskToken: string,
    decision: { kind: 'approve' } | { kind: 'reject'; reason?: string },
  ): Promise<{ kind: 'delivered' } | { kind: 'token-spent' }> {
    try {
      if (decision.kind === 'approve') {
        await this.options.client.send(
          new SendTaskSuccessCommand({ taskToken, output: JSON.stringify({ decision: 'approve' }) }),
        );
      } else {
        // The reason stays in DynamoDB (the decision record); the history gets a fixed text.
        await this.options.client.send(
          new SendTaskFailureCommand({
            taskToken,
            error: ERROR_NAMES.rejected,
            cause: 'Rejected by an approver.',
          }),
        );
      }
      return { kind: 'delivered' };
    } catch (error) {
      if (
        error instanceof TaskTimedOut ||
        error instanceof TaskDoesNotExist ||
        error instanceof InvalidToken
      ) {
        return { kind: 'token-spent' };
      }
      throw error;
    }
  }
}
