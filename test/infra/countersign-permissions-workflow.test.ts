import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../lambdas/contract/routes.js';
import { CARD_CLOSING_HANDLERS } from '../../lib/countersign-functions.js';
import type { HandlerName } from '../../lib/handler-names.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

const EVENT_PUTTERS = [...CARD_CLOSING_HANDLERS, 'escalate-card', 'record-external-decision'] as const;

describe('Countersign least privilege', () => {
  let synthesized: SynthesizedStack;
  beforeAll(() => {
    synthesized = synthesizeTestStack();
  });

  const rolesOf = (...names: HandlerName[]): string[] => names.map((name) => synthesized.roleOf(name)).sort();

  it('grants SendTaskSuccess and SendTaskFailure to api-decision and the redelivering probe only', () => {
    // Prepare
    const expected = rolesOf('api-decision', 'report-waiting-runs');

    // Act
    const successRoles = synthesized.rolesGranted('states:SendTaskSuccess');
    const failureRoles = synthesized.rolesGranted('states:SendTaskFailure');

    // Assess
    expect(successRoles).toEqual(expected);
    expect(failureRoles).toEqual(expected);
    expect(synthesized.rolesGranted('states:SendTaskHeartbeat')).toEqual([]);
  });

  it('grants StartExecution to api-runs, api-external and to the state machine itself only', () => {
    // Prepare
    const expected = [...rolesOf('api-runs', 'api-external'), synthesized.stateMachineRole()].sort();

    // Act
    const roles = synthesized.rolesGranted('states:StartExecution');

    // Assess
    expect(roles).toEqual(expected);
  });

  it('redrives through StartExecution of the run’s own state machine: no role may RedriveExecution or start elsewhere', () => {
    // Prepare: POST /runs/{id}/redrive is served by api-runs, which starts `<run id>-redrive-<n>`
    const redriveRoute = ROUTES.find((route) => route.operationId === 'redriveRun');
    const statement = synthesized
      .statementsOf(synthesized.roleOf('api-runs'))
      .find((candidate) => candidate.Action === 'states:StartExecution');

    // Act
    const redriving = ['states:RedriveExecution', 'states:StartSyncExecution', 'states:*'].flatMap((action) =>
      synthesized.rolesGranted(action),
    );

    // Assess
    expect(redriveRoute?.function).toBe('api-runs');
    expect(redriving).toEqual([]);
    expect(statement?.Resource).toEqual({
      Ref: synthesized.logicalIdOf(synthesized.stack.countersign.stateMachine),
    });
  });

  it('grants StopExecution to api-runs, the card readers and the probe only, on the executions of its own state machine', () => {
    // Act
    const roles = synthesized.rolesGranted('states:StopExecution');
    const statements = (
      ['api-runs', 'api-inbox', 'api-decision', 'api-run-events', 'report-waiting-runs'] as const
    ).map((name) =>
      synthesized
        .statementsOf(synthesized.roleOf(name))
        .find((candidate) => candidate.Action === 'states:StopExecution'),
    );

    // Assess: POST /runs/{id}/cancel, and ending the run of a card that cannot be opened (issue #9)
    expect(roles).toEqual(
      rolesOf('api-runs', 'api-inbox', 'api-decision', 'api-run-events', 'report-waiting-runs'),
    );
    for (const statement of statements) {
      const resource = JSON.stringify(statement?.Resource);
      expect(resource).toContain(':execution:');
      expect(resource).toMatch(
        /:execution:",\{"Fn::GetAtt":\["CountersignWorkflowStateMachine\w+","Name"\]\},":\*"\]\]\}$/,
      );
    }
  });

  it('scopes the state machine StartExecution to its own name, without a reference cycle', () => {
    // Prepare
    const [stateMachine] = Object.values(
      synthesized.template.findResources('AWS::StepFunctions::StateMachine'),
    );
    const stateMachineName = (stateMachine as { Properties: { StateMachineName: string } }).Properties
      .StateMachineName;
    const statements = synthesized.statementsOf(synthesized.stateMachineRole());

    // Act
    const startStatement = statements.find((statement) => statement.Action === 'states:StartExecution');

    // Assess
    expect(JSON.stringify(startStatement?.Resource)).toContain(`:stateMachine:${stateMachineName}"`);
    expect(JSON.stringify(startStatement?.Resource)).not.toContain('Ref":"CountersignWorkflowStateMachine');
  });

  it('grants events:PutEvents to the handlers that pause a run, close a card, escalate a card or answer an external run only, and tells them the default bus', () => {
    // Act
    const roles = synthesized.rolesGranted('events:PutEvents');

    // Assess: `Run Awaiting Approval` from the pause, `Card Closed` from wherever a card closes,
    // `External Run Answered` from record-external-decision
    expect(roles).toEqual(rolesOf(...EVENT_PUTTERS));
    for (const name of EVENT_PUTTERS) {
      synthesized.template.hasResourceProperties('AWS::Lambda::Function', {
        Role: { 'Fn::GetAtt': [synthesized.roleOf(name), 'Arn'] },
        Environment: { Variables: Match.objectLike({ COUNTERSIGN_EVENT_BUS_NAME: 'default' }) },
      });
    }
    const buses = synthesized
      .statementsOf(synthesized.roleOf('api-decision'))
      .filter((statement) => [statement.Action].flat().includes('events:PutEvents'));
    expect(JSON.stringify(buses.map((statement) => statement.Resource))).toContain(':event-bus/default');
  });

  it('lets the pausing function arm escalations in its own schedule group only, passing the one role that may invoke escalate-card', () => {
    // Prepare
    const groups = Object.values(synthesized.template.findResources('AWS::Scheduler::ScheduleGroup')).map(
      (group) => String((group as { Properties: { Name?: unknown } }).Properties.Name),
    );
    const invokeRoles = Object.entries(synthesized.template.findResources('AWS::IAM::Role')).filter(
      ([, role]) =>
        JSON.stringify((role as { Properties: unknown }).Properties).includes('scheduler.amazonaws.com'),
    );

    // Act
    const creators = synthesized.rolesGranted('scheduler:CreateSchedule');
    const passers = synthesized.rolesGranted('iam:PassRole');
    const [createStatement] = synthesized
      .statementsOf(synthesized.roleOf('await-approval'))
      .filter((statement) => [statement.Action].flat().includes('scheduler:CreateSchedule'));
    const [passStatement] = synthesized
      .statementsOf(synthesized.roleOf('await-approval'))
      .filter((statement) => [statement.Action].flat().includes('iam:PassRole'));
    const [invokeRoleId] = invokeRoles.map(([id]) => id);
    const invokeActions = synthesized.actionsOf(invokeRoleId ?? '');
    const invokeResources = JSON.stringify(
      synthesized.statementsOf(invokeRoleId ?? '').map((statement) => statement.Resource),
    );

    // Assess
    expect(groups).toHaveLength(1);
    expect(creators).toEqual(rolesOf('await-approval'));
    expect(passers).toEqual(rolesOf('await-approval'));
    expect(JSON.stringify(createStatement?.Resource)).toContain(`:schedule/${groups[0]}/*`);
    expect(passStatement?.Resource).toEqual({ 'Fn::GetAtt': [invokeRoleId, 'Arn'] });
    expect(invokeRoles).toHaveLength(1);
    expect([...invokeActions]).toEqual(['lambda:InvokeFunction']);
    expect(invokeResources).toContain(
      synthesized.logicalIdOf(synthesized.stack.countersign.functions['escalate-card']),
    );
    expect(invokeResources).not.toContain(
      synthesized.logicalIdOf(synthesized.stack.countersign.functions['await-approval']),
    );
    synthesized.template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: Match.objectLike({
        Statement: [Match.objectLike({ Principal: { Service: 'scheduler.amazonaws.com' } })],
      }),
    });
  });
});
