import { teamTools } from 'countersign-team-tools';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { createMcpToolStandIn } from '../../core/tools/mcp/mcp-tools.js';
import { ToolRegistry } from '../../core/tools/tool.js';
import { createBuiltInTools } from '../../tools/built-in-tools.js';
import { awsBaseDependencies } from './aws-base-dependencies.js';

let tools: RunDependencies['tools'] | undefined;

/**
 * The built-in tools and the team's tools module (aliased as `countersign-team-tools`). An MCP
 * tool's name (`<server>__<tool>`) answers with its stand-in: the run steps list the real one.
 */
export function awsTools(): RunDependencies['tools'] {
  tools ??= new ToolRegistry([...createBuiltInTools(), ...teamTools], (name) =>
    createMcpToolStandIn(name, async (runId) => {
      const { runs, configurations } = awsBaseDependencies();
      const run = await runs.getRun(runId);
      return run ? configurations.getConfiguration(run.record.configurationId) : undefined;
    }),
  );
  return tools;
}
