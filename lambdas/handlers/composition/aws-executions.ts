import { SFNClient } from '@aws-sdk/client-sfn';
import { surfaceTransientFaults } from '../../adapters/aws-faults.js';
import { StepFunctionsRunExecutions } from '../../adapters/step-functions-run-executions.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { lambdaEnvironment } from '../config.js';

let executions: RunDependencies['executions'] | undefined;

/** Starts and resumes executions of the state machine (the runs and decision APIs, every request). */
export function awsExecutions(): RunDependencies['executions'] {
  const stateMachineArn = lambdaEnvironment().COUNTERSIGN_STATE_MACHINE_ARN;
  executions ??= new StepFunctionsRunExecutions({
    client: surfaceTransientFaults(new SFNClient({})),
    ...(stateMachineArn ? { stateMachineArn } : {}),
  });
  return executions;
}
