import { ArnFormat, type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

// The grants on the run workflow that only the construct's own handlers hold: each is safe only
// beside the record its handler writes first, so none is a public `grantXxx` of the construct.

/**
 * Lets `grantee` stop the state machine's executions (states:StopExecution on its executions
 * only): what POST /runs/{id}/cancel needs after it has marked the run cancelled. Stopping an
 * execution without that record would leave a run the table calls alive.
 *
 * @example
 * grantStopRun(this, this.stateMachine, functions.get('api-runs'));
 */
export function grantStopRun(scope: Construct, stateMachine: StateMachine, grantee: IGrantable): Grant {
  const grant = Grant.addToPrincipal({
    grantee,
    actions: ['states:StopExecution'],
    resourceArns: [
      Stack.of(scope).formatArn({
        service: 'states',
        resource: 'execution',
        resourceName: `${stateMachine.stateMachineName}:*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    ],
  });
  const stateMachineLogicalId = Stack.of(scope).getLogicalId(stateMachine.node.defaultChild as CfnElement);
  // On the grantee's role (its policy holds the statement), or on the scope for a principal that is no construct.
  const principal: unknown = grantee.grantPrincipal;
  Validations.of(Construct.isConstruct(principal) ? principal : scope).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<${stateMachineLogicalId}.Name>:*]`,
    reason:
      'Execution ARNs end in a name minted per run at runtime (the run id, or its continuation); the grant covers the executions of this one state machine.',
  });
  return grant;
}

/**
 * Lets `grantee` resume or refuse a waiting run with its task token (states:SendTaskSuccess and
 * states:SendTaskFailure). Only the decision handlers (the API's and the Slack interaction's) and
 * the waiting-runs probe may hold this: a decision handler claims the decision atomically before
 * it uses the token, and the probe only redelivers a decision already claimed (never one of its own).
 *
 * @example
 * grantDecision(this.stateMachine, functions.get('api-decision'));
 */
export function grantDecision(stateMachine: StateMachine, grantee: IGrantable): Grant {
  return Grant.addToPrincipal({
    grantee,
    actions: ['states:SendTaskSuccess', 'states:SendTaskFailure'],
    resourceArns: [stateMachine.stateMachineArn],
  });
}

/**
 * Lets `grantee` end a run whose approval card cannot be opened: UpdateItem on run partitions
 * only (`RUN#*`: the run record and its card) and StopExecution on the state machine's
 * executions. No task token is involved: such a card's token is never trusted.
 *
 * @example
 * grantEndRun(this, { table, stateMachine }, functions.get('api-inbox'));
 */
export function grantEndRun(
  scope: Construct,
  run: { readonly table: Table; readonly stateMachine: StateMachine },
  grantee: IGrantable,
): Grant {
  Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:UpdateItem'],
    resourceArns: [run.table.tableArn],
    conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*'] } },
  });
  // DynamoDB encrypts with the table key itself; the grantee keeps the table-key Decrypt (through
  // DynamoDB) every card reader already holds from its row of the permissions matrix.
  return grantStopRun(scope, run.stateMachine, grantee);
}
