import { beforeAll, describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLE_NAMES } from '../../lambdas/contract/environment.js';
import { readEnvironment, readEventsEndpointEnvironment } from '../../lambdas/handlers/config.js';
import { HANDLER_NAMES, type HandlerName } from '../../lib/handler-names.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

type Variables = Record<string, unknown>;

/**
 * A function's variables as the Lambda would see them: a deploy-time value (a `Ref`, a
 * `Fn::GetAtt`) becomes a well-formed stand-in of its kind, a literal stays as it is.
 */
function asDeployed(variables: Variables): Record<string, string> {
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => {
      if (typeof value === 'string') return [name, value];
      if (typeof value === 'object' && value !== null && 'Fn::Join' in value)
        return [name, deployedJoin(value)];
      if (name.endsWith('_ARN')) return [name, 'arn:aws:service:us-east-1:123456789012:resource/deployed'];
      if (name.endsWith('_ISSUER')) return [name, 'https://issuer.example.com/pool'];
      if (name.endsWith('_URL')) return [name, 'https://api.example.com/'];
      return [name, 'deployed-value'];
    }),
  );
}

/** A value joined from deploy-time parts (a URL, a JSON document), each part a stand-in of its kind. */
function deployedJoin(value: unknown): string {
  if (typeof value === 'string') return value;
  const object = value as Record<string, unknown>;
  if ('Fn::Join' in object) {
    const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
    return parts.map(deployedJoin).join(separator);
  }
  const attribute = (object['Fn::GetAtt'] as string[] | undefined)?.[1];
  return attribute === 'ProviderURL' ? 'https://issuer.example.com/pool' : 'deployed';
}

describe('handler environment', () => {
  let synthesized: SynthesizedStack;
  let variablesOf: (name: HandlerName) => Variables;
  beforeAll(() => {
    synthesized = synthesizeTestStack();
    const resources = synthesized.template.toJSON().Resources as Record<
      string,
      { Properties: { Environment?: { Variables?: Variables } } }
    >;
    variablesOf = (name) =>
      resources[synthesized.logicalIdOf(synthesized.stack.countersign.functions[name])]?.Properties
        .Environment?.Variables ?? {};
  });

  it('sets only variables the Lambdas read', () => {
    // Act
    const unknown = HANDLER_NAMES.flatMap((name) =>
      Object.keys(variablesOf(name))
        .filter((variable) => !(ENVIRONMENT_VARIABLE_NAMES as readonly string[]).includes(variable))
        .map((variable) => `${name}: ${variable}`),
    );

    // Assess
    expect(unknown).toEqual([]);
  });

  it('gives every function an environment its cold start accepts', () => {
    // Act
    const read = (name: HandlerName) => () => readEnvironment(asDeployed(variablesOf(name)));

    // Assess
    for (const name of HANDLER_NAMES) expect(read(name), name).not.toThrow();
    expect(readEnvironment(asDeployed(variablesOf('api-runs'))).COUNTERSIGN_STATE_MACHINE_ARN).toMatch(
      /^arn:/,
    );
    // The CLI's app client and the page's: the stream accepts the tokens the HTTP API does.
    expect(
      readEventsEndpointEnvironment(asDeployed(variablesOf('api-run-events'))).COUNTERSIGN_JWT_AUDIENCE,
    ).toHaveLength(2);
  });
});
