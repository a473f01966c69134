import { toJSONSchema } from 'zod/mini';
import type { ToolSpecification } from '../model.js';
import type { Tool, ToolRegistry } from './tool.js';

// Apart from tool.ts on purpose: zod's JSON schema code (~20 KB minified) then reaches only
// the Lambdas that offer tools to a model, not every one that parses tool arguments.

/** What the model sees of a tool: its name, description and the JSON schema of its input. */
export function toSpecification(tool: Tool): ToolSpecification {
  if (tool.inputJsonSchema) {
    return { name: tool.name, description: tool.description, inputSchema: tool.inputJsonSchema };
  }
  const schema = toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  return { name: tool.name, description: tool.description, inputSchema: schema };
}

/** The specifications offered to the model: only the allowed tools that are registered. */
export function specifyAllowedTools(
  registry: Pick<ToolRegistry, 'get'>,
  allowed: readonly string[],
): ToolSpecification[] {
  return allowed
    .map((name) => registry.get(name))
    .filter((tool): tool is Tool => tool !== undefined)
    .map((tool) => toSpecification(tool));
}
