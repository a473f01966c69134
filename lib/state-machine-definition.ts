import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { COUNTERSIGN_STACK_ID, CountersignStack, type CountersignStackProps } from './countersign-stack.js';

/** Values the pseudo parameters take in an extracted definition: they sit inside ARNs. */
const PSEUDO_PARAMETERS: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::Region': 'us-east-1',
  'AWS::AccountId': '123456789012',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': COUNTERSIGN_STACK_ID,
};

interface TemplateResource {
  Type?: string;
  Properties?: Record<string, unknown>;
}

type Resources = Record<string, TemplateResource>;

function placeholderArn(resources: Resources, logicalId: string, attribute: string): string {
  if (resources[logicalId]?.Type === 'AWS::Lambda::Function') {
    return `arn:aws:lambda:us-east-1:123456789012:function:${logicalId}`;
  }
  return `arn:aws:countersign:us-east-1:123456789012:placeholder/${logicalId}/${attribute}`;
}

/** Turns one piece of a DefinitionString into text, replacing intrinsics by placeholders. */
function renderPiece(piece: unknown, resources: Resources): string {
  if (typeof piece === 'string') return piece;
  if (typeof piece === 'number' || typeof piece === 'boolean') return String(piece);
  if (piece !== null && typeof piece === 'object') {
    const intrinsic = piece as Record<string, unknown>;
    const ref = intrinsic.Ref;
    if (typeof ref === 'string') return PSEUDO_PARAMETERS[ref] ?? placeholderArn(resources, ref, 'Ref');
    const getAtt = intrinsic['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return placeholderArn(resources, String(getAtt[0]), String(getAtt[1]));
    if (typeof getAtt === 'string') {
      const [logicalId = '', attribute = ''] = getAtt.split('.');
      return placeholderArn(resources, logicalId, attribute);
    }
    const join = intrinsic['Fn::Join'];
    if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
      return join[1].map((part: unknown) => renderPiece(part, resources)).join(join[0]);
    }
  }
  throw new Error(`Unsupported intrinsic in the state machine definition: ${JSON.stringify(piece)}`);
}

/**
 * Finds the one `AWS::StepFunctions::StateMachine` of a synthesized template and returns its
 * definition as an object. The `Fn::Join` of its DefinitionString is flattened: pseudo
 * parameters take fixed values (`aws`, `us-east-1`, `123456789012`) so ARNs stay well-formed,
 * and every other intrinsic (a function's `Arn`, a `Ref`) becomes a placeholder ARN naming the
 * logical id. The local runner ignores resources (it keys handlers by state name), so these
 * placeholders only have to be stable.
 *
 * @example
 * const definition = extractStateMachineDefinition(Template.fromStack(stack).toJSON());
 * new StateMachine(definition, { validationOptions: { checkArn: false } });
 */
export function extractStateMachineDefinition(template: object): Record<string, unknown> {
  const resources = ((template as { Resources?: Resources }).Resources ?? {}) as Resources;
  const stateMachines = Object.entries(resources).filter(
    ([, resource]) => resource.Type === 'AWS::StepFunctions::StateMachine',
  );
  const [first, ...others] = stateMachines;
  if (first === undefined || others.length > 0) {
    throw new Error(
      `Expected exactly one AWS::StepFunctions::StateMachine in the template, found ${stateMachines.length}.`,
    );
  }
  const [logicalId, stateMachine] = first;
  const definitionString = stateMachine.Properties?.DefinitionString;
  if (definitionString === undefined) {
    throw new Error(`State machine ${logicalId} has no DefinitionString.`);
  }
  return JSON.parse(renderPiece(definitionString, resources)) as Record<string, unknown>;
}

/**
 * Synthesizes the same {@link CountersignStack} that `cdk synth` deploys, with asset bundling
 * switched off (`aws:cdk:bundling-stacks: []`, so no esbuild run), into a temporary directory,
 * and returns its state machine definition. The local mode runs exactly this ASL.
 *
 * @param props - the stack props, when the local mode deviates from the defaults (e.g. approvalTimeout)
 * @example
 * const definition = synthesizeStateMachineDefinition();
 * const stateMachine = new StateMachine(definition, { validationOptions: { checkArn: false } });
 */
export function synthesizeStateMachineDefinition(props: CountersignStackProps = {}): Record<string, unknown> {
  const outdir = mkdtempSync(join(tmpdir(), 'countersign-synth-'));
  try {
    // No bundling and no built-in template validation: only the definition is wanted here.
    const app = new App({
      outdir,
      context: { 'aws:cdk:bundling-stacks': [] },
      builtinCloudFormationValidation: false,
    });
    const stack = new CountersignStack(app, COUNTERSIGN_STACK_ID, props);
    const assembly = app.synth();
    return extractStateMachineDefinition(assembly.getStackArtifact(stack.artifactId).template as object);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
