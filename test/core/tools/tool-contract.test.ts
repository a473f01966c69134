import { describe, expect, it } from 'vitest';
import * as classic from 'zod';
import * as mini from 'zod/mini';
import { defineTool, type Tool, ToolRegistry } from '../../../lambdas/core/tools/tool.js';
import { specifyAllowedTools, toSpecification } from '../../../lambdas/core/tools/tool-specification.js';

function echoTool(name: string, input: Tool<{ text: string }>['input']): Tool<{ text: string }> {
  return defineTool({
    name,
    description: 'Repeats its input.',
    effect: 'read',
    input,
    execute: async ({ text }) => ({ content: text, isError: false }),
  });
}

describe('the tool contract', () => {
  const classicTool = echoTool('classic_echo', classic.strictObject({ text: classic.string().min(1) }));
  const miniTool = echoTool('mini_echo', mini.strictObject({ text: mini.string().check(mini.minLength(1)) }));

  it('offers the model the same JSON schema for a classic zod and a zod/mini input', () => {
    // Prepare
    const registry = new ToolRegistry([classicTool, miniTool]);

    // Act
    const [classicSpecification, miniSpecification] = specifyAllowedTools(registry, [
      'classic_echo',
      'mini_echo',
    ]);

    // Assess
    expect(classicSpecification?.inputSchema).toEqual({
      type: 'object',
      properties: { text: { type: 'string', minLength: 1 } },
      required: ['text'],
      additionalProperties: false,
    });
    expect(miniSpecification?.inputSchema).toEqual(classicSpecification?.inputSchema);
    expect(toSpecification(miniTool).name).toBe('mini_echo');
  });

  it('validates arguments through the shared core for either flavour', () => {
    // Prepare
    const valid = { text: 'hello' };
    const invalid = { text: '', extra: true };

    // Act
    const outcomes = [classicTool, miniTool].map((tool) => ({
      valid: mini.safeParse(tool.input, valid),
      invalid: mini.safeParse(tool.input, invalid),
    }));

    // Assess
    for (const outcome of outcomes) {
      expect(outcome.valid).toEqual({ success: true, data: valid });
      expect(outcome.invalid.success).toBe(false);
      expect(outcome.invalid.error?.issues.map((issue) => issue.code).sort()).toEqual([
        'too_small',
        'unrecognized_keys',
      ]);
    }
  });
});
