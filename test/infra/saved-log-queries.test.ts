import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HANDLER_NAMES } from '../../lib/handler-names.js';
import { SAVED_LOG_QUERIES } from '../../lib/log-queries.js';
import { resolveProjectPath } from '../../lib/project-path.js';
import { type SynthesizedStack, synthesizeTestStack } from './synthesize-test-stack.js';

const SERVICE = 'Countersign-Countersign';

/** Every Lambda source file's text, joined: what the saved queries' messages are checked against. */
async function readLambdaSources(): Promise<string> {
  const root = resolveProjectPath('lambdas');
  const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith('.ts'));
  return (await Promise.all(files.map((file) => readFile(join(root, file), 'utf8')))).join('\n');
}

describe('the saved Logs Insights queries', () => {
  let synthesized: SynthesizedStack;

  beforeAll(() => {
    synthesized = synthesizeTestStack();
  });

  it('saves the runbook’s investigations as Logs Insights queries over the handlers’ log groups', () => {
    // Act
    const definitions = Object.values(synthesized.template.findResources('AWS::Logs::QueryDefinition')).map(
      (resource) =>
        resource.Properties as {
          Name: string;
          QueryString: string;
          LogGroupNames: Array<{ Ref: string }>;
          Parameters?: Array<{ Name: string }>;
        },
    );
    const functionLogGroups = HANDLER_NAMES.map((name) =>
      synthesized.logicalIdOf(synthesized.stack.countersign.functions[name].logGroup),
    );

    // Assess
    expect(definitions.map((definition) => definition.Name).sort()).toEqual(
      SAVED_LOG_QUERIES.map((query) => `${SERVICE}/${query.name}`).sort(),
    );
    for (const definition of definitions) {
      expect(definition.LogGroupNames.length, definition.Name).toBeGreaterThan(0);
      for (const group of definition.LogGroupNames) expect(functionLogGroups).toContain(group.Ref);
    }
    const timeline = definitions.find((definition) => definition.Name.endsWith('/run-timeline'));
    expect(timeline?.QueryString).toContain("filter runId = '{{runId}}'");
    expect(timeline?.Parameters).toEqual([expect.objectContaining({ Name: 'runId' })]);
    expect(timeline?.LogGroupNames).toHaveLength(HANDLER_NAMES.length);
    const failedRuns = definitions.find((definition) => definition.Name.endsWith('/failed-runs'));
    expect(failedRuns?.LogGroupNames).toEqual([
      { Ref: synthesized.logicalIdOf(synthesized.stack.countersign.functions['mark-failed'].logGroup) },
    ]);
  });

  it('filters the saved queries only on messages a Lambda still logs, each named in the runbook', async () => {
    // Prepare
    const sources = await readLambdaSources();
    const runbook = readFileSync(resolveProjectPath('docs/runbook.md'), 'utf8');

    // Act
    const filtered = SAVED_LOG_QUERIES.flatMap((query) =>
      [...query.queryString.matchAll(/message = '([^']+)'/g)].map((match) => match[1] ?? ''),
    );

    // Assess
    expect(filtered.length).toBeGreaterThan(5);
    for (const message of filtered) expect(sources, message).toContain(`'${message}'`);
    for (const query of SAVED_LOG_QUERIES) expect(runbook, query.name).toContain(`\`${query.name}\``);
  });
});
