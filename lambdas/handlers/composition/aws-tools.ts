import { teamTools } from 'countersign-team-tools';
import type { RunDependencies } from '../../core/runs/run-dependencies.js';
import { ToolRegistry } from '../../core/tools/tool.js';
import { createBuiltInTools } from '../../tools/built-in-tools.js';

let tools: RunDependencies['tools'] | undefined;

/** The built-in tools and the team's tools module (aliased as `countersign-team-tools`). */
export function awsTools(): RunDependencies['tools'] {
  tools ??= new ToolRegistry([...createBuiltInTools(), ...teamTools]);
  return tools;
}
