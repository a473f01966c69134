import * as z from 'zod/mini';
import type { Configuration } from '../../configurations.js';
import { TEXTS } from '../../texts.js';
import { TOOL_NAME_PATTERN, type Tool } from '../tool.js';
import {
  MCP_PREVIEW_SUFFIX,
  MCP_SERVER_NAME_PATTERN,
  MCP_TOOL_SEPARATOR,
  type McpServerConfiguration,
} from './mcp-server-configuration.js';
import type { McpServers, McpToolDescriptor } from './mcp-servers.js';

/** The server validates its own arguments against its JSON schema; countersign only needs an object. */
const mcpArguments = z.record(z.string(), z.unknown());
type McpArguments = z.infer<typeof mcpArguments>;

const MAX_DESCRIPTION_CHARACTERS = 2_000;

// Each error sets its `name`: a card and a log show only that, and bundles rename classes.
class McpPreviewRefused extends Error {
  public constructor() {
    super('The MCP preview tool answered with an error.');
    this.name = 'McpPreviewRefused';
  }
}

/** `<server>__<tool>`: the name the model sees, clear of the built-in tools' names. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}${MCP_TOOL_SEPARATOR}${tool}`;
}

/** The server part of an MCP tool's name, or `undefined` for a name that is not one. */
export function mcpServerOf(toolName: string): string | undefined {
  const at = toolName.indexOf(MCP_TOOL_SEPARATOR);
  if (at <= 0) return undefined;
  const server = toolName.slice(0, at);
  return MCP_SERVER_NAME_PATTERN.test(server) ? server : undefined;
}

/**
 * The tools one server lists, as countersign tools. Only `readOnlyHint: true` makes a tool a
 * read; every other tool is a write and needs approval, whatever else the server hints
 * (`destructiveHint: false` included): the hints are the server's claim, approval is ours.
 * A read-only `<tool>__preview` beside `<tool>` is that tool's preview (docs/mcp.md) and is
 * not offered to the model; a name that does not fit a tool name is left out.
 */
export function createMcpTools(
  server: McpServerConfiguration,
  descriptors: readonly McpToolDescriptor[],
  servers: McpServers,
): Tool[] {
  const byName = new Map(descriptors.map((descriptor) => [descriptor.name, descriptor]));
  const tools: Tool[] = [];
  for (const descriptor of descriptors) {
    if (isPreviewCompanion(descriptor, byName)) continue;
    const name = mcpToolName(server.name, descriptor.name);
    if (!TOOL_NAME_PATTERN.test(name)) continue;
    const companion = byName.get(`${descriptor.name}${MCP_PREVIEW_SUFFIX}`);
    tools.push(
      createMcpTool(
        server,
        descriptor,
        companion?.annotations?.readOnlyHint === true ? companion : undefined,
        servers,
      ),
    );
  }
  return tools;
}

function isPreviewCompanion(descriptor: McpToolDescriptor, byName: Map<string, McpToolDescriptor>): boolean {
  if (!descriptor.name.endsWith(MCP_PREVIEW_SUFFIX)) return false;
  if (descriptor.annotations?.readOnlyHint !== true) return false;
  return byName.has(descriptor.name.slice(0, -MCP_PREVIEW_SUFFIX.length));
}

function createMcpTool(
  server: McpServerConfiguration,
  descriptor: McpToolDescriptor,
  companion: McpToolDescriptor | undefined,
  servers: McpServers,
): Tool<McpArguments> {
  const tool: Tool<McpArguments> = {
    name: mcpToolName(server.name, descriptor.name),
    description: (
      descriptor.description ?? `The "${descriptor.name}" tool of the ${server.name} MCP server.`
    ).slice(0, MAX_DESCRIPTION_CHARACTERS),
    input: mcpArguments,
    inputJsonSchema: { ...descriptor.inputSchema, type: 'object' },
    effect: descriptor.annotations?.readOnlyHint === true ? 'read' : 'write',
    async execute(args) {
      const result = await servers.callTool(server, descriptor.name, args);
      return { content: result.text, isError: result.isError };
    },
  };
  if (!companion) return tool;
  return {
    ...tool,
    // Lines as the server wrote them: the capture bounds them and marks hidden characters.
    async preview(args) {
      const result = await servers.callTool(server, companion.name, args);
      if (result.isError) throw new McpPreviewRefused();
      return result.text.split(/\r?\n/);
    },
    // The server cannot check a viewer's rights to what the call touches: fail closed unless
    // the configuration says approvers may read this server's previews.
    mayViewerReadPreview: async () => server.approversMayReadPreviews,
  };
}

/**
 * The stand-in for the MCP tools of a server that cannot be listed now (it is unreachable
 * or gone): its calls are answered with an error and never reach the server, so running one
 * needs no approval. The model reads that the server is unavailable and the run goes on. Its
 * effect says nothing of the real tool's: a pause classifies such a call as unconfirmed
 * (`RunTools.confirmedTool` never returns this stand-in).
 */
export function createUnreachableMcpTool(toolName: string, server: string): Tool<McpArguments> {
  return {
    name: toolName,
    description: TEXTS.mcpServerUnreachable(server),
    input: mcpArguments,
    effect: 'read',
    execute: async () => ({ content: TEXTS.mcpServerUnreachable(server), isError: true }),
  };
}

/**
 * What the API Lambdas (inbox, decision, events) know of an MCP tool without asking its
 * server: a write (the safe default for what the card says), any object of arguments (the
 * server judges them at execution), and the read gate the run's configuration sets for its
 * server's previews, failing closed when the run or its configuration cannot be read.
 */
export function createMcpToolStandIn(
  toolName: string,
  configurationOfRun: (runId: string) => Promise<Configuration | undefined>,
): Tool<McpArguments> | undefined {
  const server = mcpServerOf(toolName);
  if (server === undefined) return undefined;
  return {
    name: toolName,
    description: `An MCP tool of the ${server} server.`,
    input: mcpArguments,
    effect: 'write',
    execute: async () => ({ content: TEXTS.toolUnavailable(toolName), isError: true }),
    async mayViewerReadPreview(_args, _viewer, context) {
      const configuration = await configurationOfRun(context.runId);
      const named = configuration?.mcpServers?.find((candidate) => candidate.name === server);
      return named?.approversMayReadPreviews === true;
    },
  };
}
