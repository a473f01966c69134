import {
  ArnFormat,
  type CfnElement,
  Duration,
  Names,
  type RemovalPolicy,
  Stack,
  Token,
  Validations,
} from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  Choice,
  Condition,
  CustomState,
  DefinitionBody,
  Fail,
  type IChainable,
  IntegrationPattern,
  JsonPath,
  LogLevel,
  Pass,
  Result,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
  Timeout,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import {
  ERROR_NAMES,
  failedStateName,
  STATE_NAMES,
  type StateName,
} from '../lambdas/contract/state-names.js';
import type { CountersignFunctions } from './countersign-functions.js';
import type { HandlerName } from './handler-names.js';
import { addStepRetries, CONTINUE_AS_NEW_RETRY, WEBHOOK_RETRY } from './workflow-retries.js';

/** Properties of {@link CountersignWorkflow}. */
export interface CountersignWorkflowProps {
  readonly functions: CountersignFunctions;
  /** How long AwaitApproval waits for a decision before the run ends as expired. */
  readonly approvalTimeout: Duration;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

// Lambda keeps the step short of the Task timeout, so a slow handler fails as a Lambda timeout.
const TASK_TIMEOUT_MARGIN = Duration.seconds(30);
// StartExecution is a single API call; a minute covers throttling retries inside the service.
const START_EXECUTION_TIMEOUT = Duration.seconds(60);

/**
 * The run state machine (Standard, JSONPath): one execution per run, carrying only the run id
 * and turn; everything else lives sealed in DynamoDB. Long runs continue as a new execution
 * (`ContinueAsNew`) before the 25,000-event history limit.
 *
 * Every Task has an explicit timeout: the local runner defaults Tasks to 60 s otherwise.
 *
 * @example
 * const workflow = new CountersignWorkflow(this, 'Workflow', { functions, approvalTimeout, ... });
 * workflow.stateMachine.grantStartExecution(apiRuns);
 */
export class CountersignWorkflow extends Construct {
  public readonly stateMachine: StateMachine;
  public readonly logGroup: LogGroup;

  public constructor(scope: Construct, id: string, props: CountersignWorkflowProps) {
    super(scope, id);
    const { functions } = props;
    const stack = Stack.of(this);

    const timeoutOf = (name: HandlerName): Timeout => {
      const lambdaTimeout = functions.get(name).timeout ?? Duration.seconds(3);
      return Timeout.duration(Duration.seconds(lambdaTimeout.toSeconds() + TASK_TIMEOUT_MARGIN.toSeconds()));
    };
    // The handlers the definition invokes: the role's acknowledgements name exactly these.
    const invoked = new Set<HandlerName>();
    const invoke = (
      stateName: string,
      name: HandlerName,
      payload: Record<string, unknown>,
      options: { resultPath?: string } = {},
    ): LambdaInvoke => {
      invoked.add(name);
      const task = new LambdaInvoke(this, stateName, {
        lambdaFunction: functions.get(name),
        payload: TaskInput.fromObject(payload),
        payloadResponseOnly: true,
        taskTimeout: timeoutOf(name),
        retryOnServiceExceptions: false,
        ...options,
      });
      return addStepRetries(task);
    };
    // The execution id rides along so that every step's log lines carry it as their correlation id.
    const executionId = JsonPath.stringAt('$$.Execution.Id');
    const runAndTurn = {
      runId: JsonPath.stringAt('$.runId'),
      turn: JsonPath.numberAt('$.turn'),
      executionId,
    };

    const runFailed = new Fail(this, STATE_NAMES.runFailed, { error: ERROR_NAMES.runFailed });
    // MarkFailed records the failure and does not catch its own errors: that would loop.
    const markFailed = invoke(STATE_NAMES.markFailed, 'mark-failed', {
      runId: JsonPath.stringAt('$.runId'),
      failure: JsonPath.objectAt('$.failure'),
      failedStep: JsonPath.stringAt('$.failedStep'),
      executionId,
    }).next(runFailed);
    const catchFailure = { resultPath: '$.failure' };
    // Each catch names the state that failed on its way to MarkFailed, which records it on the
    // run: a redrive then knows the failure was transient, and where (docs/runbook.md, Redrive).
    const markFailedFrom = (stateName: StateName): IChainable =>
      new Pass(this, failedStateName(stateName), {
        result: Result.fromString(stateName),
        resultPath: '$.failedStep',
      }).next(markFailed);

    const done = new Succeed(this, STATE_NAMES.done);
    const expired = new Succeed(this, STATE_NAMES.expired);

    const prepare = invoke(STATE_NAMES.prepare, 'prepare', {
      runId: JsonPath.stringAt('$.runId'),
      executionId,
    });
    const modelTurn = invoke(STATE_NAMES.modelTurn, 'model-turn', runAndTurn);
    const executeTools = invoke(STATE_NAMES.executeTools, 'execute-tools', runAndTurn);
    const recordRejection = invoke(STATE_NAMES.recordRejection, 'record-rejection', runAndTurn);
    const finish = invoke(STATE_NAMES.finish, 'finish-run', {
      runId: JsonPath.stringAt('$.runId'),
      executionId,
    });
    // Its input goes on (an external run's kind and turn): the state after it chooses by them.
    const markExpired = invoke(STATE_NAMES.markExpired, 'mark-expired', runAndTurn, {
      resultPath: JsonPath.DISCARD,
    });
    // An external run (docs/external-agents.md) pauses on the same card; once its wait ends, its
    // answer is recorded and announced, then posted to the caller's webhook.
    const recordExternalDecision = invoke(
      STATE_NAMES.recordExternalDecision,
      'record-external-decision',
      runAndTurn,
    );
    const notifyCaller = invoke(STATE_NAMES.notifyCaller, 'notify-caller', {
      runId: JsonPath.stringAt('$.runId'),
      executionId,
    });
    // A step's output names where the run goes; one without a route (a step from before) names none.
    const routeIs = (route: string): Condition =>
      Condition.and(Condition.isPresent('$.route'), Condition.stringEquals('$.route', route));
    const isExternal = Condition.and(
      Condition.isPresent('$.kind'),
      Condition.stringEquals('$.kind', 'external'),
    );

    invoked.add('await-approval');
    const awaitApproval = new LambdaInvoke(this, STATE_NAMES.awaitApproval, {
      lambdaFunction: functions.get('await-approval'),
      integrationPattern: IntegrationPattern.WAIT_FOR_TASK_TOKEN,
      payload: TaskInput.fromObject({ ...runAndTurn, taskToken: JsonPath.taskToken }),
      resultPath: '$.decision',
      // The whole human wait: the run then ends as expired, never silently.
      taskTimeout: Timeout.duration(props.approvalTimeout),
      retryOnServiceExceptions: false,
    });

    const continueAsNew = new CustomState(this, STATE_NAMES.continueAsNew, {
      stateJson: {
        Type: 'Task',
        Resource: `arn:${stack.partition}:states:::states:startExecution`,
        Parameters: {
          'StateMachineArn.$': '$$.StateMachine.Id',
          Input: {
            'runId.$': '$.runId',
            'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$': '$$.Execution.Id',
          },
          // The name makes a retried hand-over idempotent: a second start of the same turn is refused.
          'Name.$': "States.Format('{}-{}', $.runId, $.turn)",
        },
        TimeoutSeconds: START_EXECUTION_TIMEOUT.toSeconds(),
      },
    });

    const caught: Array<[StateName, LambdaInvoke]> = [
      [STATE_NAMES.prepare, prepare],
      [STATE_NAMES.modelTurn, modelTurn],
      [STATE_NAMES.executeTools, executeTools],
      [STATE_NAMES.recordRejection, recordRejection],
      [STATE_NAMES.finish, finish],
      [STATE_NAMES.markExpired, markExpired],
      [STATE_NAMES.recordExternalDecision, recordExternalDecision],
    ];
    for (const [stateName, task] of caught) task.addCatch(markFailedFrom(stateName), catchFailure);
    addStepRetries(awaitApproval);
    const afterRejection = new Choice(this, STATE_NAMES.afterRejection)
      .when(isExternal, recordExternalDecision)
      .otherwise(recordRejection);
    const afterApproval = new Choice(this, STATE_NAMES.afterApproval)
      .when(isExternal, recordExternalDecision)
      .otherwise(executeTools);
    awaitApproval.addCatch(afterRejection, { errors: [ERROR_NAMES.rejected], resultPath: '$.rejection' });
    // A retried pause that finds its turn approved on record carries it on rather than wait again.
    awaitApproval.addCatch(afterApproval, { errors: [ERROR_NAMES.approved], resultPath: '$.decision' });
    awaitApproval.addCatch(markExpired, { errors: [ERROR_NAMES.timeout], resultPath: '$.timeout' });
    awaitApproval.addCatch(markFailedFrom(STATE_NAMES.awaitApproval), catchFailure);
    continueAsNew.addRetry(CONTINUE_AS_NEW_RETRY);
    continueAsNew.addCatch(markFailedFrom(STATE_NAMES.continueAsNew), catchFailure);
    notifyCaller.addRetry(WEBHOOK_RETRY);
    // A webhook that could not be delivered leaves the answer as it is: the run stays decided.
    notifyCaller.addCatch(done, { resultPath: '$.webhook' });

    awaitApproval.next(afterApproval);
    // An edit of an external run is a new proposal, not an answer: ExecuteTools reopens the turn
    // with the edited calls (it runs nothing of an external run), and the run pauses again.
    recordExternalDecision.next(
      new Choice(this, STATE_NAMES.afterExternalDecision)
        .when(routeIs('edited'), executeTools)
        .otherwise(notifyCaller),
    );
    notifyCaller.next(done);
    // A record that changed after its card was shown: the same calls wait on a fresh card. An
    // output without a route (a step from before preconditions, mid-deploy) goes on as before.
    executeTools.next(
      new Choice(this, STATE_NAMES.executed).when(routeIs('review'), awaitApproval).otherwise(modelTurn),
    );
    recordRejection.next(modelTurn);
    finish.next(done);
    continueAsNew.next(done);
    markExpired.next(
      new Choice(this, STATE_NAMES.afterExpiry).when(isExternal, recordExternalDecision).otherwise(expired),
    );

    modelTurn.next(
      this.choose(
        STATE_NAMES.route,
        '$.route',
        { tools: executeTools, approval: awaitApproval, continue: continueAsNew },
        finish,
      ),
    );

    // A re-driven waiting run re-enters its wait, or carries out a decision already on record.
    const definition = prepare.next(
      this.choose(
        STATE_NAMES.resume,
        '$.next',
        {
          await: awaitApproval,
          execute: executeTools,
          reject: recordRejection,
          answer: recordExternalDecision,
        },
        modelTurn,
      ),
    );

    this.logGroup = new LogGroup(this, 'LogGroup', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });

    // An explicit name lets the role be granted StartExecution on its own ARN without a
    // reference from the role's policy back to the state machine (a dependency cycle).
    const stateMachineName = this.nameStateMachine();
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromChainable(definition),
      tracingEnabled: true,
      // ALL shows every transition; no execution data, so no input, output or task token in logs.
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
    });
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:StartExecution'],
        resources: [
          stack.formatArn({
            service: 'states',
            resource: 'stateMachine',
            resourceName: stateMachineName,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    this.acknowledgeRoleWildcards(functions, invoked);
  }

  /** A Choice on one string field: each value goes to its state, any other value to `otherwise`. */
  private choose(
    stateName: string,
    path: string,
    branches: Readonly<Record<string, IChainable>>,
    otherwise: IChainable,
  ): Choice {
    const choice = new Choice(this, stateName);
    for (const [value, next] of Object.entries(branches))
      choice.when(Condition.stringEquals(path, value), next);
    return choice.otherwise(otherwise);
  }

  private nameStateMachine(): string {
    const stackName = Stack.of(this).stackName;
    if (Token.isUnresolved(stackName)) {
      // A nested stack's name is a token: a name unique in the app (its construct path, hashed)
      // keeps the role's own-ARN grant free of a reference to the state machine.
      return Names.uniqueResourceName(this, { maxLength: 80, separator: '-' });
    }
    // Names allow 80 characters; the address suffix keeps two instances in one stack apart.
    const safeStackName = stackName.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 62);
    return `${safeStackName}-runs-${this.node.addr.slice(0, 12)}`;
  }

  private acknowledgeRoleWildcards(functions: CountersignFunctions, invoked: ReadonlySet<HandlerName>): void {
    const stack = Stack.of(this);
    const role = this.stateMachine.role;
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray (PutTraceSegments, PutTelemetryRecords, GetSampling*) and CloudWatch Logs vended log delivery (CreateLogDelivery, PutResourcePolicy, DescribeLogGroups, ...) do not support resource-level permissions, so AWS requires "*" for state machine tracing and logging.',
    });
    for (const name of invoked) {
      const handler = functions.get(name);
      const functionLogicalId = stack.getLogicalId(handler.node.defaultChild as CfnElement);
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${functionLogicalId}.Arn>:*]`,
        reason:
          'The Step Functions Lambda integration grants lambda:InvokeFunction on the function and its qualified ARNs (versions, aliases) of this one function; the ":*" cannot be narrowed without pinning a version.',
      });
    }
  }
}
