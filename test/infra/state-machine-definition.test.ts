import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { COUNTERSIGN_STACK_ID, CountersignStack } from '../../lib/countersign-stack.js';
import { HANDLER_NAMES } from '../../lib/handler-names.js';
import {
  extractStateMachineDefinition,
  synthesizeStateMachineDefinition,
} from '../../lib/state-machine-definition.js';
import { synthesizeTestStack } from './synthesize-test-stack.js';

describe('extractStateMachineDefinition', () => {
  it('flattens the DefinitionString and replaces intrinsics by well-formed placeholder ARNs', () => {
    // Prepare
    const template = {
      Resources: {
        Worker: { Type: 'AWS::Lambda::Function', Properties: {} },
        Machine: {
          Type: 'AWS::StepFunctions::StateMachine',
          Properties: {
            DefinitionString: {
              'Fn::Join': [
                '',
                [
                  '{"StartAt":"Work","States":{"Work":{"Type":"Task","End":true,"Resource":"',
                  { 'Fn::GetAtt': ['Worker', 'Arn'] },
                  '"},"Other":{"Type":"Task","End":true,"Resource":"arn:',
                  { Ref: 'AWS::Partition' },
                  ':states:::states:startExecution"}}}',
                ],
              ],
            },
          },
        },
      },
    };

    // Act
    const definition = extractStateMachineDefinition(template);

    // Assess
    expect(definition).toEqual({
      StartAt: 'Work',
      States: {
        Work: { Type: 'Task', End: true, Resource: 'arn:aws:lambda:us-east-1:123456789012:function:Worker' },
        Other: { Type: 'Task', End: true, Resource: 'arn:aws:states:::states:startExecution' },
      },
    });
  });

  it('refuses a template without exactly one state machine', () => {
    // Act
    const extract = () => extractStateMachineDefinition({ Resources: {} });

    // Assess
    expect(extract).toThrow(
      'Expected exactly one AWS::StepFunctions::StateMachine in the template, found 0.',
    );
  });
});

describe('the CDK stack and the local mode use the same state-machine definition', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'countersign-full-synth-'));
  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
  });

  it('synthesizes the same ASL as the unbundled test stack', () => {
    // Prepare
    const { template } = synthesizeTestStack();

    // Act
    const definition = synthesizeStateMachineDefinition();

    // Assess
    expect(definition).toEqual(extractStateMachineDefinition(template.toJSON()));
  });

  // The one slow infra test: real esbuild bundling of every handler, as `cdk synth` does.
  it('synthesizes the same ASL as the fully bundled, nag-checked stack', { timeout: 180_000 }, () => {
    // Prepare
    const app = new App({ outdir });
    const stack = new CountersignStack(app, COUNTERSIGN_STACK_ID);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

    // Act
    const assembly = app.synth();
    const template = JSON.parse(
      readFileSync(
        join(assembly.directory, assembly.getStackArtifact(stack.artifactId).templateFile),
        'utf8',
      ),
    ) as object;
    const bundles = readdirSync(assembly.directory).filter((entry) => entry.startsWith('asset.'));

    // Assess
    expect(synthesizeStateMachineDefinition()).toEqual(extractStateMachineDefinition(template));
    expect(bundles).toHaveLength(HANDLER_NAMES.length);
    for (const bundle of bundles) {
      const code = readFileSync(join(assembly.directory, bundle, 'index.mjs'), 'utf8');
      expect(code.startsWith('import { createRequire as countersignCreateRequire }'), bundle).toBe(true);
    }
  });
});
