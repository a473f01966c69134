import { describe, expect, it } from 'vitest';
import {
  MAX_GATEWAY_TOOLS,
  MAX_TOOL_DESCRIPTION_CHARACTERS,
  offerUpstreamTools,
} from '../../../lambdas/agents/mcp-gateway/upstream-tools.js';
import type { McpToolDescriptor } from '../../../lambdas/core/tools/mcp/mcp-servers.js';

const schema = { type: 'object', properties: { id: { type: 'string' } } };
const tool = (name: string, extra: Partial<McpToolDescriptor> = {}): McpToolDescriptor => ({
  name,
  inputSchema: schema,
  ...extra,
});

describe('the upstream tools the gateway offers', () => {
  it('makes only readOnlyHint: true a read; false is a write, no hint an unconfirmed effect', () => {
    // Act
    const offered = offerUpstreamTools([
      tool('lookup', { annotations: { readOnlyHint: true } }),
      tool('create', { annotations: { readOnlyHint: false } }),
      tool('delete'),
    ]);

    // Assess
    expect(offered.map((each) => [each.name, each.effect])).toEqual([
      ['lookup', 'read'],
      ['create', 'write'],
      ['delete', 'unknown'],
    ]);
  });

  it('leaves out names a card cannot carry, the gateway’s own tool’s name, names listed twice and schemas that are not small object schemas', () => {
    // Act
    const offered = offerUpstreamTools([
      tool('send\u202email'),
      tool('../admin'),
      tool('dotted.name'),
      tool(`a${'b'.repeat(64)}`),
      tool('__proto__'),
      tool('countersign_approval_status', { annotations: { readOnlyHint: true } }),
      tool('twice', { annotations: { readOnlyHint: true } }),
      tool('twice'),
      tool('array_schema', { inputSchema: { type: 'array' } }),
      tool('huge_schema', { inputSchema: { type: 'object', description: 'x'.repeat(17_000) } }),
      tool('kept', { description: 'd'.repeat(5_000) }),
    ]);

    // Assess: a name listed twice is left out whole: which definition holds cannot be known
    expect(offered.map((each) => each.name)).toEqual(['kept']);
    expect(offered[0]?.description).toHaveLength(MAX_TOOL_DESCRIPTION_CHARACTERS);
  });

  it('offers at most MAX_GATEWAY_TOOLS tools', () => {
    // Act
    const offered = offerUpstreamTools(Array.from({ length: 150 }, (_, index) => tool(`tool_${index}`)));

    // Assess
    expect(offered).toHaveLength(MAX_GATEWAY_TOOLS);
  });
});
