import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import {
  COUNTERSIGN_STACK_ID,
  CountersignStack,
  type CountersignStackProps,
} from '../../lib/countersign-stack.js';
import type { HandlerName } from '../../lib/handler-names.js';

/** A synthesized CountersignStack and the helpers the infra tests read it with. */
export interface SynthesizedStack {
  app: App;
  stack: CountersignStack;
  template: Template;
  /** The CloudFormation logical id of a construct's default resource. */
  logicalIdOf(construct: IConstruct): string;
  /** The logical id of a handler's role. */
  roleOf(name: HandlerName): string;
  /** The logical id of the state machine's role. */
  stateMachineRole(): string;
  /** Every IAM action granted to a role, by its inline default policies. */
  actionsOf(roleLogicalId: string): Set<string>;
  /** Every Allow statement granted to a role. */
  statementsOf(roleLogicalId: string): PolicyStatementJson[];
  /** The logical ids of the roles granted an action. */
  rolesGranted(action: string): string[];
}

export interface PolicyStatementJson {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

interface PolicyResource {
  Properties: { Roles: Array<{ Ref: string }>; PolicyDocument: { Statement: PolicyStatementJson[] } };
}

/**
 * Synthesizes CountersignStack with asset bundling off (`aws:cdk:bundling-stacks: []`) and
 * the built-in template validation off, so an infra test takes about a second.
 */
export function synthesizeTestStack(props: CountersignStackProps = {}): SynthesizedStack {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const stack = new CountersignStack(app, COUNTERSIGN_STACK_ID, props);
  const template = Template.fromStack(stack);
  const policies = Object.values(template.findResources('AWS::IAM::Policy')) as PolicyResource[];

  const logicalIdOf = (construct: IConstruct): string =>
    Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement);
  const statementsOf = (roleLogicalId: string): PolicyStatementJson[] =>
    policies
      .filter((policy) => policy.Properties.Roles.some((role) => role.Ref === roleLogicalId))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
      .filter((statement) => statement.Effect === 'Allow');
  const actionsOf = (roleLogicalId: string): Set<string> =>
    new Set(statementsOf(roleLogicalId).flatMap((statement) => [statement.Action].flat()));
  const roleIds = Object.keys(template.findResources('AWS::IAM::Role'));

  return {
    app,
    stack,
    template,
    logicalIdOf,
    roleOf: (name) => {
      const role = stack.countersign.functions[name].role;
      if (role === undefined) throw new Error(`${name} has no role`);
      return logicalIdOf(role);
    },
    stateMachineRole: () => logicalIdOf(stack.countersign.stateMachine.role),
    actionsOf,
    statementsOf,
    rolesGranted: (action) => roleIds.filter((roleId) => actionsOf(roleId).has(action)).sort(),
  };
}

/** The state machine definition of a template, parsed from its DefinitionString. */
export function definitionStatesOf(
  definition: Record<string, unknown>,
): Record<string, Record<string, unknown>> {
  return definition.States as Record<string, Record<string, unknown>>;
}
