import { App, Errors, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { Countersign, type CountersignProps } from '../../lib/countersign.js';
import { synthesizeTestStack } from './synthesize-test-stack.js';

function templateOf(
  props: CountersignProps,
  scope: (app: App) => Stack = (app) => new Stack(app, 'Team'),
): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = scope(app);
  new Countersign(stack, 'Approvals', props);
  return Template.fromStack(stack);
}

/** What `addOutputs` adds with the construct's own user pool, sorted. */
const OUTPUTS_WITH_A_USER_POOL = [
  'ApiUrl',
  'EventsUrl',
  'InboxUrl',
  'IssuerUrl',
  'RunbookUrl',
  'SignInUrl',
  'StateMachineArn',
  'TableName',
  'UserPoolClientId',
  'UserPoolId',
];

describe('the Countersign construct as a library', () => {
  it('refuses a bad prop with CDK’s ValidationError naming the prop and the construct path', () => {
    // Act
    let thrown: unknown;
    try {
      templateOf({ maxTurns: 0 });
    } catch (error) {
      thrown = error;
    }

    // Assess
    expect(Errors.isValidationError(thrown)).toBe(true);
    expect((thrown as Error).message).toMatch(/^Team\/Approvals: maxTurns 0 is invalid/);
    expect((thrown as { constructPath?: string }).constructPath).toBe('Team/Approvals');
  });

  it.each([
    [{ runbookUrl: 'wiki/runbook' }, /runbookUrl "wiki\/runbook" is not an https URL/],
    [{ runbookUrl: 'https://wiki.example.com/runbook#top' }, /without a fragment/],
    [{ memorySize: { 'model-turn': 64 } }, /memorySize.model-turn 64 is invalid; use whole MB from 128/],
    [
      { memorySize: { 'no-such-handler': 512 } as never },
      /memorySize names "no-such-handler", which is not a handler/,
    ],
  ])('refuses %o at synth', (props, message) => {
    // Assess
    expect(() => templateOf(props)).toThrow(message);
  });

  it('adds no stack outputs of its own: the app’s stack picks them', () => {
    // Act
    const outputs = templateOf({}).findOutputs('*');

    // Assess
    expect(outputs).toEqual({});
  });

  it('keeps the outputs sign-in and the smoke test need in the repository’s stack, through addOutputs', () => {
    // Act
    const synthesized = synthesizeTestStack();
    const outputs = synthesized.template.findOutputs('*');

    // Assess
    expect(Object.keys(outputs).sort()).toEqual(OUTPUTS_WITH_A_USER_POOL);
    const apiId = synthesized.logicalIdOf(synthesized.stack.countersign.httpApi);
    expect(JSON.stringify(outputs.RunbookUrl?.Value)).toContain(apiId);
    expect(JSON.stringify(outputs.RunbookUrl?.Value)).toContain('/runbook');
    expect(outputs.UserPoolClientId?.Value).toEqual({
      Ref: synthesized.logicalIdOf(synthesized.stack.countersign.auth.userPoolClient as never),
    });
  });

  it('adds the outputs on request, under a prefix, and leaves out the pool an external provider replaces', () => {
    // Prepare
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Team');
    const external = new Countersign(stack, 'External', {
      externalIdentityProvider: { issuerUrl: 'https://login.example.com', audience: ['countersign'] },
      serviceName: 'team-external',
    });

    // Act
    const added = external.addOutputs({ idPrefix: 'External' });
    const outputs = Template.fromStack(stack).findOutputs('*');

    // Assess
    expect(Object.keys(added).sort()).toEqual(
      OUTPUTS_WITH_A_USER_POOL.filter((name) => !name.startsWith('UserPool') && name !== 'SignInUrl'),
    );
    expect(Object.keys(outputs).sort()).toEqual(
      Object.keys(added)
        .map((name) => `External${name}`)
        .sort(),
    );
    expect(outputs.ExternalIssuerUrl?.Value).toBe('https://login.example.com');
  });

  it('does not hand out the grants only its own handlers may hold', () => {
    // Prepare
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const countersign = new Countersign(new Stack(app, 'Team'), 'Approvals');
    const grantee = new Role(countersign, 'Grantee', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    });

    // Act: the type-check (part of npm test) fails here if grantDecision becomes public again.
    // @ts-expect-error grantDecision is private: only the decision handler may resume runs.
    const grantDecision = (): unknown => countersign.grantDecision(grantee);
    // @ts-expect-error grantStopRun is private: a stop without the cancelled record strands a run.
    const grantStopRun = (): unknown => countersign.grantStopRun(grantee);
    // @ts-expect-error grantEndRun is private, like the stop grant it includes.
    const grantEndRun = (): unknown => countersign.grantEndRun(grantee);

    // Assess
    expect([grantDecision, grantStopRun, grantEndRun].map((grant) => typeof grant)).toEqual([
      'function',
      'function',
      'function',
    ]);
    expect(countersign.grantStartRun(grantee).success).toBe(true);
  });

  it('synthesizes in a nested stack, whose name is not a literal', () => {
    // Act
    const template = templateOf({}, (app) => new NestedStack(new Stack(app, 'Parent'), 'Nested'));

    // Assess
    const [stateMachine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    const name = (stateMachine as { Properties: { StateMachineName: string } }).Properties.StateMachineName;
    expect(name).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
  });

  it('links every alarm to the runbook URL it is given', () => {
    // Act
    const template = templateOf({ runbookUrl: 'https://wiki.example.com/countersign/runbook' });

    // Assess
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Array<{
      Properties: { AlarmDescription: string };
    }>;
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmDescription).toMatch(
        /Runbook: https:\/\/wiki\.example\.com\/countersign\/runbook#[a-z0-9]+$/,
      );
    }
  });

  it('links alarms to the runbook the deployment serves by default, not a repository path', () => {
    // Act
    const template = templateOf({});

    // Assess: `<ApiUrl>runbook#<alarm>`, the API's URL a token joined into the description
    const [alarm] = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Array<{
      Properties: { AlarmDescription: unknown };
    }>;
    const description = JSON.stringify(alarm?.Properties.AlarmDescription);
    expect(description).toMatch(/Runbook: https:\/\/"/);
    expect(description).toMatch(/\.execute-api\./);
    expect(description).toMatch(/\/runbook#[a-z0-9]+"/);
    expect(description).not.toContain('docs/runbook.md');
  });

  it('leaves out the dashboard and threat protection when asked, and sizes a handler', () => {
    // Act
    const template = templateOf({
      dashboard: false,
      threatProtection: false,
      memorySize: { 'model-turn': 2048 },
    });

    // Assess
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    template.hasResourceProperties('AWS::Cognito::UserPool', { UserPoolTier: 'ESSENTIALS' });
    const memories = Object.values(template.findResources('AWS::Lambda::Function')).map(
      (resource) => (resource as { Properties: { MemorySize?: number } }).Properties.MemorySize,
    );
    expect(memories).toContain(2048);
  });

  it('creates the dashboard and Cognito threat protection by default', () => {
    // Act
    const template = templateOf({});

    // Assess
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.hasResourceProperties('AWS::Cognito::UserPool', { UserPoolTier: 'PLUS' });
  });
});
