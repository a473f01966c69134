import type { Tool } from '../core/tools/tool.js';
import { getPageTool } from './get-page.js';
import { listPagesTool } from './list-pages.js';
import { searchPagesTool } from './search-pages.js';
import { updatePageMetadataTool } from './update-page-metadata.js';

/**
 * The tools every deployment ships: three read-only page tools and the one writer.
 *
 * @example
 * const registry = new ToolRegistry([...createBuiltInTools(), ...teamTools]);
 */
export function createBuiltInTools(): Tool[] {
  return [getPageTool, listPagesTool, searchPagesTool, updatePageMetadataTool];
}
