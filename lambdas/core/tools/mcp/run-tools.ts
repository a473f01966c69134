import type { Configuration } from '../../configurations.js';
import { CountersignError, nameErrorClass } from '../../errors.js';
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
 * The tools of a run at one step. `tools` answers every name a call may carry (an unreachable
 * server's tools answer with an error and reach nothing); `confirmedTool` answers only for a tool
 * whose definition, and so whose effect, this step established: one the deployment registers, or
 * one its MCP server listed now. The approval rule classifies from `confirmedTool` alone.
 */
export interface RunTools {
  tools: ToolRegistry;
  /** The MCP tools the servers listed now (namespaced). */
  mcpToolNames: string[];
  confirmedTool(name: string): Tool | undefined;
}

/**
 * The tools of one run: the deployment's, plus the tools the configuration's MCP servers list
 * now. `offer` (the model turn) fails the run with a reason naming the server when one cannot
 * be listed: the model would be offered less than the configuration says. `execute` (the pause
 * and the execution) answers the calls of such a server with an error result instead, and
 * leaves their tools unconfirmed.
 */
export async function toolsForRun(
  dependencies: RunToolsDependencies,
  configuration: Pick<Configuration, 'mcpServers'> | undefined,
  mode: 'offer' | 'execute',
): Promise<RunTools> {
  const servers = configuration?.mcpServers ?? [];
  if (servers.length === 0) return deploymentTools(dependencies.tools);
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
          errorClass: nameErrorClass(error),
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
  const listedNames = new Set(tools.map((tool) => tool.name));
  return {
    tools: registry,
    mcpToolNames: [...listedNames],
    confirmedTool: (name) =>
      dependencies.tools.has(name) || listedNames.has(name) ? registry.get(name) : undefined,
  };
}

/** The deployment's own tools: each registered one is confirmed; a fallback's answer is not. */
function deploymentTools(tools: ToolRegistry): RunTools {
  return {
    tools,
    mcpToolNames: [],
    confirmedTool: (name) => (tools.has(name) ? tools.get(name) : undefined),
  };
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
): Promise<RunTools> {
  const namesMcpTool = calls.some(
    (call) => mcpServerOf(call.tool) !== undefined && !dependencies.tools.has(call.tool),
  );
  if (!namesMcpTool || !dependencies.configurations) return deploymentTools(dependencies.tools);
  const configuration = await dependencies.configurations.getConfiguration(configurationId);
  return toolsForRun(dependencies, configuration, 'execute');
}
