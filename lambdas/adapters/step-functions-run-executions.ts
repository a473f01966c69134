import {
  ExecutionAlreadyExists,
  InvalidToken,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
} from '@aws-sdk/client-sfn';
import type { RunExecutions } from '../core/ports.js';

/** The error a rejection ends the wait with; the state machine catches exactly this name. */
export const REJECTED_ERROR = 'countersign.Rejected';

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
          new SendTaskFailureCommand({ taskToken, error: REJECTED_ERROR, cause: 'Rejected by an approver.' }),
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
