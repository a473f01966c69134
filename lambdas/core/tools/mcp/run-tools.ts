import type { Configuration } from '../../configurations.js';
import { CountersignError, describeErrorClass } from '../../errors.js';
import type { Logger } from '../../ports.js';
import { TEXTS } from '../../texts.js';
import { type Tool, ToolRegistry } from '../tool.js';
import { McpHostNotAllowed } from './mcp-host-policy.js';
import type { McpServers } from './mcp-servers.js';
import { createMcpTools, createUnreachableMcpTool, mcpServerOf } from './mcp-tools.js';

export interface RunToolsDependencies {
  tools: ToolRegistry;
  mcp?: McpServers;
  logger: Logger;
}

/**
 * The tools of one run: the deployment's, plus the tools the configuration's MCP servers list
 * now. `offer` (the model turn) fails the run with a reason naming the server when one cannot
 * be listed: the model would be offered less than the configuration says. `execute` (the pause
 * and the execution) answers the calls of such a server with an error result instead.
 */
export async function toolsForRun(
  dependencies: RunToolsDependencies,
  configuration: Pick<Configuration, 'mcpServers'> | undefined,
  mode: 'offer' | 'execute',
): Promise<{ tools: ToolRegistry; mcpToolNames: string[] }> {
  const servers = configuration?.mcpServers ?? [];
  if (servers.length === 0) return { tools: dependencies.tools, mcpToolNames: [] };
  const listed = await Promise.all(
    servers.map(async (server): Promise<{ server: string; tools?: Tool[] }> => {
      try {
        if (!dependencies.mcp) throw new CountersignError('configuration', 'No MCP client is wired.');
        const descriptors = await dependencies.mcp.listTools(server);
        return { server: server.name, tools: createMcpTools(server, descriptors, dependencies.mcp) };
      } catch (error) {
        // The class only: an MCP client's error text can carry the server's URL and token.
        dependencies.logger.warn('MCP server could not be listed', {
          server: server.name,
          errorClass: describeErrorClass(error),
        });
        if (mode === 'offer')
          throw new CountersignError(
            'model-failed',
            error instanceof McpHostNotAllowed
              ? TEXTS.mcpServerHostNotAllowed(server.name)
              : TEXTS.mcpServerUnreachable(server.name),
          );
        return { server: server.name };
      }
    }),
  );
  const tools = listed.flatMap((entry) => entry.tools ?? []);
  const unreachable = new Set(
    listed.filter((entry) => entry.tools === undefined).map((entry) => entry.server),
  );
  let registry = dependencies.tools.extend(tools);
  if (unreachable.size > 0) {
    const base = registry;
    registry = new ToolRegistry([], (name) => {
      const server = mcpServerOf(name);
      if (server !== undefined && unreachable.has(server)) return createUnreachableMcpTool(name, server);
      return base.get(name);
    });
  }
  return { tools: registry, mcpToolNames: tools.map((tool) => tool.name) };
}

/**
 * The tools of the run whose pending calls these are. The configuration is read only when a
 * call names an MCP tool, so a run of built-in tools costs no extra read.
 */
export async function toolsForPendingCalls(
  dependencies: RunToolsDependencies & {
    configurations?: { getConfiguration(id: string): Promise<Configuration | undefined> };
  },
  calls: ReadonlyArray<{ tool: string }>,
  configurationId: string,
): Promise<ToolRegistry> {
  const namesMcpTool = calls.some(
    (call) => mcpServerOf(call.tool) !== undefined && !dependencies.tools.has(call.tool),
  );
  if (!namesMcpTool || !dependencies.configurations) return dependencies.tools;
  const configuration = await dependencies.configurations.getConfiguration(configurationId);
  return (await toolsForRun(dependencies, configuration, 'execute')).tools;
}
