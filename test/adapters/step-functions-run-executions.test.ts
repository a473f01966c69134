import { ExecutionDoesNotExist, type SFNClient, type StopExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { StepFunctionsRunExecutions } from '../../lambdas/adapters/step-functions-run-executions.js';
import { ERROR_NAMES } from '../../lambdas/contract/state-names.js';

const STATE_MACHINE_ARN = 'arn:aws:states:eu-west-1:123456789012:stateMachine:Countersign-Runs';

function recordingClient(fail?: Error): { client: SFNClient; sent: StopExecutionCommand[] } {
  const sent: StopExecutionCommand[] = [];
  const client = {
    send: async (command: StopExecutionCommand) => {
      sent.push(command);
      if (fail) throw fail;
      return {};
    },
  } as unknown as SFNClient;
  return { client, sent };
}

describe('StepFunctionsRunExecutions.stopExecution', () => {
  it('stops the execution Prepare recorded, with a fixed error and cause', async () => {
    // Prepare
    const { client, sent } = recordingClient();
    const executions = new StepFunctionsRunExecutions({ client, stateMachineArn: STATE_MACHINE_ARN });
    const executionId = 'arn:aws:states:eu-west-1:123456789012:execution:Countersign-Runs:run-1-7';

    // Act
    await executions.stopExecution({ runId: 'run-1', executionId });

    // Assess
    expect(sent).toHaveLength(1);
    expect(sent[0]?.input).toEqual({
      executionArn: executionId,
      error: ERROR_NAMES.cancelled,
      cause: 'Cancelled through the API.',
    });
  });

  it('derives the first execution (named after the run) when none was recorded yet', async () => {
    const { client, sent } = recordingClient();
    const executions = new StepFunctionsRunExecutions({ client, stateMachineArn: STATE_MACHINE_ARN });

    await executions.stopExecution({ runId: 'run-2' });

    expect(sent[0]?.input.executionArn).toBe(
      'arn:aws:states:eu-west-1:123456789012:execution:Countersign-Runs:run-2',
    );
  });

  it('treats an execution that does not exist as already stopped, and passes other errors on', async () => {
    const missing = new ExecutionDoesNotExist({ message: 'gone', $metadata: {} });
    const gone = new StepFunctionsRunExecutions({
      client: recordingClient(missing).client,
      stateMachineArn: STATE_MACHINE_ARN,
    });
    const broken = new StepFunctionsRunExecutions({
      client: recordingClient(new Error('throttled')).client,
      stateMachineArn: STATE_MACHINE_ARN,
    });

    await expect(gone.stopExecution({ runId: 'run-3' })).resolves.toBeUndefined();
    await expect(broken.stopExecution({ runId: 'run-3' })).rejects.toThrow('throttled');
  });
});
