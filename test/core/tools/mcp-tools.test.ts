import { describe, expect, it } from 'vitest';
import { configurationSchema } from '../../../lambdas/core/configurations.js';
import type { McpServerConfiguration } from '../../../lambdas/core/tools/mcp/mcp-server-configuration.js';
import type { McpServers, McpToolDescriptor } from '../../../lambdas/core/tools/mcp/mcp-servers.js';
import {
  createMcpToolStandIn,
  createMcpTools,
  mcpServerOf,
} from '../../../lambdas/core/tools/mcp/mcp-tools.js';
import { needsApproval } from '../../../lambdas/core/tools/tool.js';
import { toSpecification } from '../../../lambdas/core/tools/tool-specification.js';

const server: McpServerConfiguration = {
  name: 'tickets',
  url: 'http://127.0.0.1:1/mcp',
  timeoutMs: 1_000,
  approversMayReadPreviews: false,
};

/** Records calls; answers each with its tool name. A real server is in test/e2e/mcp-tools.test.ts. */
function recordingServers(): McpServers & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    listTools: async () => [],
    callTool: async (_server, tool) => {
      calls.push(tool);
      return { text: `${tool} line 1\n${tool} line 2`, isError: false };
    },
  };
}

const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };

describe('MCP tools as countersign tools', () => {
  it('needs approval for every tool but one whose readOnlyHint is true, whatever else it hints', () => {
    // Prepare
    const descriptors: McpToolDescriptor[] = [
      { name: 'read', inputSchema: schema, annotations: { readOnlyHint: true } },
      { name: 'not_destructive', inputSchema: schema, annotations: { readOnlyHint: false } },
      { name: 'silent', inputSchema: schema },
    ];

    // Act
    const tools = createMcpTools(server, descriptors, recordingServers());

    // Assess
    expect(tools.map((tool) => [tool.name, needsApproval(tool)])).toEqual([
      ['tickets__read', false],
      ['tickets__not_destructive', true],
      ['tickets__silent', true],
    ]);
    expect(toSpecification(tools[0] as never).inputSchema).toEqual(schema);
  });

  it('takes a read-only <tool>__preview as the preview, hides it from the model, and ignores a companion that writes', async () => {
    // Prepare
    const servers = recordingServers();
    const descriptors: McpToolDescriptor[] = [
      { name: 'create', inputSchema: schema },
      { name: 'create__preview', inputSchema: schema, annotations: { readOnlyHint: true } },
      { name: 'drop', inputSchema: schema },
      { name: 'drop__preview', inputSchema: schema },
    ];

    // Act
    const tools = createMcpTools(server, descriptors, servers);
    const create = tools.find((tool) => tool.name === 'tickets__create');
    const drop = tools.find((tool) => tool.name === 'tickets__drop');
    const lines = await create?.preview?.({ title: 'x' }, undefined as never, undefined as never);

    // Assess
    expect(tools.map((tool) => tool.name)).toEqual([
      'tickets__create',
      'tickets__drop',
      'tickets__drop__preview',
    ]);
    expect(lines).toEqual(['create__preview line 1', 'create__preview line 2']);
    expect(servers.calls).toEqual(['create__preview']);
    expect(drop?.preview).toBeUndefined();
    expect(await create?.mayViewerReadPreview?.({}, undefined as never, undefined as never)).toBe(false);
  });

  it('leaves out a tool whose namespaced name would not be a valid tool name', () => {
    // Act
    const tools = createMcpTools(server, [{ name: 'x'.repeat(60), inputSchema: schema }], recordingServers());

    // Assess
    expect(tools).toEqual([]);
  });

  it('gives the API a stand-in that needs approval and whose read gate follows the run configuration, closed when unknown', async () => {
    // Prepare
    const configuration = configurationSchema.parse({
      configurationId: 'c',
      label: 'c',
      provider: 'scripted',
      model: 'scripted',
      mcpServers: [{ name: 'tickets', url: 'http://127.0.0.1:1/mcp', approversMayReadPreviews: true }],
    });
    const known = createMcpToolStandIn('tickets__create', async (runId) =>
      runId === 'run-1' ? configuration : undefined,
    );
    const context = (runId: string) => ({ runId }) as never;

    // Act
    const readable = await known?.mayViewerReadPreview?.({}, undefined as never, context('run-1'));
    const unknownRun = await known?.mayViewerReadPreview?.({}, undefined as never, context('run-2'));
    const otherServer = await createMcpToolStandIn(
      'other__create',
      async () => configuration,
    )?.mayViewerReadPreview?.({}, undefined as never, context('run-1'));

    // Assess
    expect(known && needsApproval(known)).toBe(true);
    expect([readable, unknownRun, otherServer]).toEqual([true, false, false]);
    expect(createMcpToolStandIn('get_page', async () => configuration)).toBeUndefined();
    expect(mcpServerOf('tickets__a__b')).toBe('tickets');
  });

  it('refuses unknown keys, duplicate names and non-http URLs in a configuration, naming the path', () => {
    // Act
    const results = [
      { name: 'a', url: 'http://127.0.0.1/mcp', approversMayReadPreview: true },
      { name: 'a_b', url: 'http://127.0.0.1/mcp' },
      { name: 'a', url: 'file:///etc/passwd' },
    ].map((server) =>
      configurationSchema.safeParse({
        configurationId: 'c',
        label: 'c',
        provider: 'scripted',
        model: 'scripted',
        mcpServers: [server],
      }),
    );
    const duplicate = configurationSchema.safeParse({
      configurationId: 'c',
      label: 'c',
      provider: 'scripted',
      model: 'scripted',
      mcpServers: [
        { name: 'a', url: 'http://127.0.0.1/mcp' },
        { name: 'A', url: 'http://127.0.0.1/mcp' },
      ],
    });

    // Assess
    expect(results.map((result) => result.success)).toEqual([false, false, false]);
    expect(results[0]?.error?.issues[0]?.path).toEqual(['mcpServers', 0]);
    expect(duplicate.success).toBe(false);
  });
});
