import { ArnFormat, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Grant, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import type { EnvironmentVariableName } from '../lambdas/contract/environment.js';

/** Properties of {@link CountersignEscalationSchedules}. */
export interface CountersignEscalationSchedulesProps {
  /** The function that pauses a run (await-approval): it arms each card's escalation steps. */
  readonly pausing: LambdaFunction;
  /** The function a step's schedule invokes (escalate-card). */
  readonly escalate: LambdaFunction;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * Card escalation timers as EventBridge Scheduler one-time schedules: a schedule group of
 * countersign's own, a role Scheduler assumes to invoke escalate-card (that function only), and
 * the pausing function's right to create schedules in that group only and to pass that role
 * only. Nothing polls: a step's schedule fires once and Scheduler deletes it.
 *
 * @example
 * new CountersignEscalationSchedules(this, 'Escalations', { pausing, escalate, removalPolicy });
 */
export class CountersignEscalationSchedules extends Construct {
  public readonly scheduleGroup: ScheduleGroup;
  /** The role Scheduler invokes escalate-card with. */
  public readonly invokeRole: Role;

  public constructor(scope: Construct, id: string, props: CountersignEscalationSchedulesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.scheduleGroup = new ScheduleGroup(this, 'Group', { removalPolicy: props.removalPolicy });
    this.invokeRole = new Role(this, 'InvokeRole', {
      // Only Scheduler in this account may assume it (the confused-deputy condition AWS documents).
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
      description: 'countersign: EventBridge Scheduler invokes escalate-card for a card escalation step',
    });
    props.escalate.grantInvoke(this.invokeRole);
    const escalateLogicalId = stack.getLogicalId(props.escalate.node.defaultChild as never);
    Validations.of(this.invokeRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${escalateLogicalId}.Arn>:*]`,
      reason:
        'grantInvoke covers the function and its qualified ARNs (versions, aliases) of this one function; the ":*" cannot be narrowed without pinning a version.',
    });

    Grant.addToPrincipal({
      grantee: props.pausing,
      actions: ['scheduler:CreateSchedule'],
      resourceArns: [
        stack.formatArn({
          service: 'scheduler',
          resource: 'schedule',
          resourceName: `${this.scheduleGroup.scheduleGroupName}/*`,
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ],
    });
    this.invokeRole.grantPassRole(props.pausing.grantPrincipal);
    Validations.of(props.pausing.role ?? props.pausing).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${this.scheduleGroup.scheduleGroupName}/*]`,
      reason:
        'Schedule names are made per run, turn and step at runtime; the grant covers creating schedules in countersign’s own escalation group only.',
    });

    const environment: Partial<Record<EnvironmentVariableName, string>> = {
      COUNTERSIGN_ESCALATION_SCHEDULE_GROUP: this.scheduleGroup.scheduleGroupName,
      COUNTERSIGN_ESCALATION_TARGET_ARN: props.escalate.functionArn,
      COUNTERSIGN_ESCALATION_ROLE_ARN: this.invokeRole.roleArn,
    };
    for (const [name, value] of Object.entries(environment)) props.pausing.addEnvironment(name, value);
  }
}
