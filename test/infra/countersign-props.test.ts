import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { App, type CfnElement, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { environmentSchema } from '../../lambdas/contract/environment.js';
import { readEnvironment, readEnvironmentPolicyFloor } from '../../lambdas/handlers/config.js';

/** The variables every function gets besides the one under test. */
const DEPLOYED_VARIABLES = {
  COUNTERSIGN_TABLE_NAME: 'table',
  COUNTERSIGN_SEALING_KEY_ARN: 'arn:aws:kms:eu-west-1:123456789012:key/sealing',
  COUNTERSIGN_OVERFLOW_BUCKET: 'bucket',
  COUNTERSIGN_OVERFLOW_KEY_ARN: 'arn:aws:kms:eu-west-1:123456789012:key/overflow',
};

import { Countersign, type CountersignProps } from '../../lib/countersign.js';

function buildCountersign(props: CountersignProps | ((stack: Stack) => CountersignProps)): Countersign {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'PropsTest');
  return new Countersign(stack, 'Countersign', typeof props === 'function' ? props(stack) : props);
}

describe('Countersign props validation', () => {
  it.each([
    ['too short', Duration.seconds(59), /approvalTimeout 59 seconds is out of range.*Duration\.minutes\(1\)/],
    [
      'too long for the local runner',
      Duration.days(25),
      /approvalTimeout 25 days is out of range.*Duration\.days\(24\)/,
    ],
    ['not whole seconds', Duration.millis(90_500), /approvalTimeout .* is not a whole number of seconds/],
  ])('refuses an approvalTimeout that is %s', (_case, approvalTimeout, message) => {
    // Act
    const build = () => buildCountersign({ approvalTimeout });

    // Assess
    expect(build).toThrow(message);
  });

  it('accepts the approvalTimeout bounds', () => {
    // Act
    const build = () => {
      buildCountersign({ approvalTimeout: Duration.minutes(1) });
      buildCountersign({ approvalTimeout: Duration.days(24) });
    };

    // Assess
    expect(build).not.toThrow();
  });

  it.each([
    [{ skillsMaxBytes: 0 }, /skillsMaxBytes 0 is invalid; use a whole number of bytes between 1 and/],
    [{ skillsMaxBytes: 1.5 }, /skillsMaxBytes 1.5 is invalid/],
    [{ maxTurns: 0 }, /maxTurns 0 is invalid; use a whole number between 1 and 200/],
    [{ maxTurns: 201 }, /maxTurns 201 is invalid/],
    [{ inboxShards: 0 }, /inboxShards 0 is invalid; use a whole number between 1 and 64 \(default 4\)/],
    [{ inboxShards: 2.5 }, /inboxShards 2.5 is invalid/],
    [{ modelProvider: 'gpt' as never }, /modelProvider "gpt" is not supported; use one of 'bedrock'/],
    [{ bedrockModelId: 'claude sonnet' }, /bedrockModelId "claude sonnet" is not a Bedrock model id/],
    [{ logRetention: 12345 as RetentionDays }, /logRetention 12345 is not a RetentionDays value/],
    [{ removalPolicy: 'keep' as RemovalPolicy }, /removalPolicy "keep" is not a RemovalPolicy value/],
    [{ modelProvider: 'openai-compatible' as const }, /'openai-compatible' needs openAiCompatible/],
    [{ toolsModule: 'does/not/exist.ts' }, /toolsModule "does\/not\/exist.ts" does not exist/],
    [
      { policyFloor: { fourEyes: 'sometimes' as never } },
      /policyFloor.fourEyes "sometimes" is invalid; use 'always'/,
    ],
    [
      { policyFloor: { requiredApprovals: 0 } },
      /policyFloor.requiredApprovals 0 is invalid; use a whole number from 1 to 10/,
    ],
    [
      { policyFloor: { decisionGate: 'page' as never } },
      /policyFloor.decisionGate "page" is invalid; use 'tool' or 'record'/,
    ],
    [
      { policyFloor: { fourEyesTools: ['update page'] } },
      /policyFloor.fourEyesTools "update page" is invalid/,
    ],
    [
      { mcpAllowedHosts: ['https://mcp.example.com'] },
      /mcpAllowedHosts entry "https:\/\/mcp.example.com" is not host or host:port \(no scheme, path or wildcard\); list each MCP server's host/,
    ],
    [
      { mcpAllowedHosts: ['*.example.com'] },
      /mcpAllowedHosts entry "\*.example.com" is not host or host:port/,
    ],
    [{ mcpAllowedHosts: ['mcp.example.com/mcp'] }, /mcpAllowedHosts entry "mcp.example.com\/mcp"/],
    [
      { mcpAllowedHosts: ['169.254.169.254'] },
      /mcpAllowedHosts entry "169.254.169.254" is a loopback, link-local or unspecified address/,
    ],
    [{ mcpAllowedHosts: ['[fd00:ec2::254]'] }, /mcpAllowedHosts entry "\[fd00:ec2::254\]" is a loopback/],
    [{ mcpAllowedHosts: ['localhost:9001'] }, /mcpAllowedHosts entry "localhost:9001" is a loopback/],
    [{ mcpAllowedHosts: ['127.0.0.1'] }, /mcpAllowedHosts entry "127.0.0.1" is a loopback/],
    [{ mcpAllowedHosts: ['localhost.'] }, /mcpAllowedHosts entry "localhost." is a loopback/],
    [
      { mcpAllowedHosts: ['[::169.254.169.254]'] },
      /mcpAllowedHosts entry "\[::169.254.169.254\]" is a loopback, link-local or unspecified address \(or an IPv6 form of one\)/,
    ],
    [
      { mcpAllowedHosts: ['mcp.example.com.'] },
      /mcpAllowedHosts entry "mcp.example.com." has an empty label or a trailing dot/,
    ],
    [{ mcpAllowedHosts: [''] }, /mcpAllowedHosts entry "" is not host or host:port/],
    [
      { quotas: { runsStartedPerMinute: 0 } },
      /quotas.runsStartedPerMinute 0 is invalid; use a whole number between 1 and 100000 \(default 20\)/,
    ],
    [{ quotas: { openEventStreams: 2.5 } }, /quotas.openEventStreams 2.5 is invalid/],
  ])('refuses %o with a message that quotes the value and says how to fix it', (props, message) => {
    // Act
    const build = () => buildCountersign(props);

    // Assess
    expect(build).toThrow(message);
  });

  it('refuses an OpenAI-compatible endpoint over plain HTTP', () => {
    // Act
    const build = () =>
      buildCountersign((stack) => ({
        modelProvider: 'openai-compatible',
        openAiCompatible: {
          baseUrl: 'http://models.example.com/v1',
          apiKeySecret: Secret.fromSecretNameV2(stack, 'Key', 'openai'),
        },
      }));

    // Assess
    expect(build).toThrow(/baseUrl "http:\/\/models.example.com\/v1" is not an https URL/);
  });

  it('refuses an OpenAI-compatible endpoint when another provider is chosen', () => {
    // Act
    const build = () =>
      buildCountersign((stack) => ({
        openAiCompatible: {
          baseUrl: 'https://models.example.com/v1',
          apiKeySecret: Secret.fromSecretNameV2(stack, 'Key', 'openai'),
        },
      }));

    // Assess
    expect(build).toThrow(/openAiCompatible is set but modelProvider is 'bedrock'/);
  });

  it('refuses a tools module that is not a script', () => {
    // Prepare
    const directory = mkdtempSync(join(tmpdir(), 'countersign-tools-'));
    const notAModule = join(directory, 'tools.json');
    writeFileSync(notAModule, '{}');

    // Act
    const build = () => buildCountersign({ toolsModule: notAModule });

    // Assess
    expect(build).toThrow(/is not a TypeScript or JavaScript module/);
  });

  it('resolves a relative tools module against the working directory', () => {
    // Prepare
    const directory = mkdtempSync(join(tmpdir(), 'countersign-tools-'));
    writeFileSync(join(directory, 'team-tools.ts'), 'export const teamTools = [];\n');
    const relativePath = relative(process.cwd(), join(directory, 'team-tools.ts'));

    // Act
    const build = () => buildCountersign({ toolsModule: relativePath });

    // Assess
    expect(build).not.toThrow();
  });

  it('hands the policy floor to every function through the validated config module', () => {
    // Prepare
    const policyFloor = {
      fourEyes: 'always',
      fourEyesTools: ['update_page_metadata'],
      requiredApprovals: 2,
      decisionGate: 'record',
    } as const;

    // Act
    const countersign = buildCountersign({ policyFloor });

    // Assess: each function's variable reads back, through the Lambdas' config module, as the props
    const functions = Template.fromStack(Stack.of(countersign)).findResources('AWS::Lambda::Function');
    const floors = Object.values(functions)
      .map((resource) => resource.Properties?.Environment?.Variables?.COUNTERSIGN_POLICY_FLOOR)
      .filter((value): value is string => typeof value === 'string');
    expect(floors.length).toBe(Object.keys(countersign.functions).length);
    for (const floor of floors) {
      expect(readEnvironmentPolicyFloor({ COUNTERSIGN_POLICY_FLOOR: floor })).toEqual(policyFloor);
    }
  });

  it('hands the quotas, defaults filled in, to every function through the validated config module', () => {
    // Act
    const countersign = buildCountersign({ quotas: { runsStartedPerMinute: 5, openEventStreams: 1 } });

    // Assess
    const functions = Template.fromStack(Stack.of(countersign)).findResources('AWS::Lambda::Function');
    const values = Object.values(functions)
      .map((resource) => resource.Properties?.Environment?.Variables?.COUNTERSIGN_PRINCIPAL_QUOTAS)
      .filter((value): value is string => typeof value === 'string');
    expect(values.length).toBe(Object.keys(countersign.functions).length);
    for (const value of values) {
      expect(
        readEnvironment({ ...DEPLOYED_VARIABLES, COUNTERSIGN_PRINCIPAL_QUOTAS: value })
          .COUNTERSIGN_PRINCIPAL_QUOTAS,
      ).toEqual({
        runsStartedPerMinute: 5,
        waitingRuns: 25,
        openEventStreams: 1,
        completionsPerMinute: 60,
      });
    }
    expect(() =>
      readEnvironment({ ...DEPLOYED_VARIABLES, COUNTERSIGN_PRINCIPAL_QUOTAS: '{"waitingRuns":0}' }),
    ).toThrow(/COUNTERSIGN_PRINCIPAL_QUOTAS/);
  });

  it('hands mcpAllowedHosts, normalised, to exactly the steps that connect and api-admin', () => {
    // Act
    const countersign = buildCountersign({
      mcpAllowedHosts: ['MCP.Tickets.example.com:443', 'mcp.internal.example.com:8443'],
    });

    // Assess: the variable reads back, through the Lambdas' config module, as the hosts
    const functions = Template.fromStack(Stack.of(countersign)).findResources('AWS::Lambda::Function');
    const withVariable = Object.entries(countersign.functions)
      .filter(([, handler]) => {
        const logicalId = Stack.of(countersign).getLogicalId(handler.node.defaultChild as CfnElement);
        return (
          functions[logicalId]?.Properties?.Environment?.Variables?.COUNTERSIGN_MCP_ALLOWED_HOSTS !==
          undefined
        );
      })
      .map(([name]) => name);
    expect(withVariable.sort()).toEqual(['api-admin', 'await-approval', 'execute-tools', 'model-turn']);
    const variable = Object.values(functions)
      .map((resource) => resource.Properties?.Environment?.Variables?.COUNTERSIGN_MCP_ALLOWED_HOSTS)
      .find((value): value is string => typeof value === 'string');
    expect(environmentSchema.shape.COUNTERSIGN_MCP_ALLOWED_HOSTS.parse(variable)).toEqual([
      'mcp.tickets.example.com',
      'mcp.internal.example.com:8443',
    ]);
  });

  it('lists no MCP host by default: the variable is empty, and reads back as none', () => {
    // Act
    const countersign = buildCountersign({});

    // Assess
    const functions = Template.fromStack(Stack.of(countersign)).findResources('AWS::Lambda::Function');
    const values = Object.values(functions)
      .map((resource) => resource.Properties?.Environment?.Variables?.COUNTERSIGN_MCP_ALLOWED_HOSTS)
      .filter((value) => value !== undefined);
    expect(values).toEqual(['', '', '', '']);
    expect(environmentSchema.shape.COUNTERSIGN_MCP_ALLOWED_HOSTS.parse('')).toEqual([]);
  });
});
