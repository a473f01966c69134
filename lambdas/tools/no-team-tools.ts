import type { Tool } from '../core/tools/tool.js';

/**
 * The team tools of a deployment that adds none. The CDK construct's `toolsModule` prop
 * replaces this module in the Lambda bundles (esbuild alias `countersign-team-tools`); a team
 * module exports `teamTools` with the same type.
 *
 * @example
 * import { teamTools } from 'countersign-team-tools';
 * const registry = new ToolRegistry([...createBuiltInTools(), ...teamTools]);
 */
export const teamTools: Tool[] = [];
