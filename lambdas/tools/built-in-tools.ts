import type { Tool } from '../core/tools/tool.js';
import { appendPageKeywordsTool } from './append-page-keywords.js';
import { getPageTool } from './get-page.js';
import { listPagesTool } from './list-pages.js';
import { searchPagesTool } from './search-pages.js';
import { updatePageMetadataTool } from './update-page-metadata.js';

/**
 * The tools every deployment ships: three read-only page tools, the absolute writer, and the
 * relative writer that guards its write with a precondition.
 *
 * @example
 * const registry = new ToolRegistry([...createBuiltInTools(), ...teamTools]);
 */
export function createBuiltInTools(): Tool[] {
  return [getPageTool, listPagesTool, searchPagesTool, updatePageMetadataTool, appendPageKeywordsTool];
}
