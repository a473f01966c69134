import { createRequire } from 'node:module';
import { Duration } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESERVED_CONCURRENCY_FOR_PRODUCTION } from '../../lib/limits.js';
import { synthesizeTestStack } from './synthesize-test-stack.js';

/**
 * The synthesized template against the CloudFormation resource provider schemas, with the
 * validator aws-cdk-lib itself ships and bundles (@aws/cloudformation-validate, the engine of its
 * CloudFormationValidatePlugin): a property value CloudFormation would reject fails here, not
 * at `cdk deploy`.
 */
interface Diagnostic {
  ruleId: string;
  severity: 'FATAL' | 'ERROR' | 'WARN' | 'INFO' | 'DEBUG';
  message: string;
  source: string;
  entity?: { logicalId: string };
  propertyPath?: string;
}

interface CloudFormationValidate {
  SchemaValidator: new () => { validate(template: unknown, region?: string): Diagnostic[]; free(): void };
  TemplateContent: new (content: string, name?: string) => unknown;
}

// A bundled dependency of aws-cdk-lib: resolved from aws-cdk-lib's own folder, the version it uses.
const requireFromCdk = createRequire(createRequire(import.meta.url).resolve('aws-cdk-lib/package.json'));
const validation = requireFromCdk('@aws/cloudformation-validate') as CloudFormationValidate;

describe('the synthesized template against the CloudFormation resource schemas', () => {
  let validator: InstanceType<CloudFormationValidate['SchemaValidator']>;

  beforeAll(() => {
    validator = new validation.SchemaValidator();
  });

  afterAll(() => {
    validator.free();
  });

  /** Every finding CloudFormation would act on (warnings and worse), as `logicalId property: message`. */
  function findingsOf(template: object): string[] {
    const diagnostics = validator.validate(
      new validation.TemplateContent(JSON.stringify(template), 'countersign.template.json'),
      'us-east-1',
    );
    return diagnostics
      .filter((diagnostic) => ['FATAL', 'ERROR', 'WARN'].includes(diagnostic.severity))
      .map(
        (diagnostic) =>
          `${diagnostic.severity} ${diagnostic.ruleId} ${diagnostic.entity?.logicalId ?? ''} ${diagnostic.propertyPath ?? ''}: ${diagnostic.message}`,
      );
  }

  it('accepts the default stack', () => {
    // Act
    const findings = findingsOf(synthesizeTestStack().template.toJSON());

    // Assess
    expect(findings).toEqual([]);
  });

  it('accepts the stack with every optional setting the construct turns into resources', () => {
    // Act
    const findings = findingsOf(
      synthesizeTestStack({
        countersign: {
          modelProvider: 'openai-compatible',
          externalIdentityProvider: { issuerUrl: 'https://login.example.com', audience: ['countersign'] },
          identityGroupGrants: { approvers: ['agent_approve'] },
          reservedConcurrency: RESERVED_CONCURRENCY_FOR_PRODUCTION,
          retention: { endedRuns: Duration.days(30), decisions: Duration.days(400) },
          modelPrices: { 'test-model': { inputPerMillionTokens: 3, outputPerMillionTokens: 15 } },
          runbookUrl: 'https://wiki.example.com/countersign/runbook',
          mcpAllowedHosts: ['mcp.example.com'],
          throttling: { rateLimit: 20, burstLimit: 40 },
          memorySize: { 'model-turn': 2048 },
          threatProtection: false,
        },
        openAiCompatible: { baseUrl: 'https://api.example.com/v1', apiKeySecretName: 'openai-key' },
      }).template.toJSON(),
    );

    // Assess
    expect(findings).toEqual([]);
  });

  it('refuses a property value CloudFormation would reject, naming the resource and property', () => {
    // Prepare: one alarm with an operator CloudFormation does not know, one query without a name
    const template = synthesizeTestStack().template.toJSON() as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const resourcesOf = (type: string) =>
      Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
    const [[alarmId, alarm] = ['', undefined]] = resourcesOf('AWS::CloudWatch::Alarm');
    const [[queryId, query] = ['', undefined]] = resourcesOf('AWS::Logs::QueryDefinition');
    if (!alarm || !query) throw new Error('the template has no alarm or no saved query');
    alarm.Properties.ComparisonOperator = 'MoreThanUsual';
    delete query.Properties.Name;

    // Act
    const findings = findingsOf(template);

    // Assess
    expect(findings).toHaveLength(2);
    expect(findings.find((finding) => finding.includes(alarmId))).toMatch(
      /Properties\.ComparisonOperator: 'MoreThanUsual' is not one of/,
    );
    expect(findings.find((finding) => finding.includes(queryId))).toMatch(
      /^FATAL .*'Name' is a required property/,
    );
  });
});
