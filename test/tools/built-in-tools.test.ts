import { describe, expect, it } from 'vitest';
import { needsApproval, ToolRegistry } from '../../lambdas/core/tools/tool.js';
import { createBuiltInTools } from '../../lambdas/tools/built-in-tools.js';

describe('createBuiltInTools', () => {
  it('registers the three page readers and the one writer, and only the writer needs approval', () => {
    // Act
    const tools = createBuiltInTools();
    const registry = new ToolRegistry(tools);

    // Assess
    expect(registry.names()).toEqual(['get_page', 'list_pages', 'search_pages', 'update_page_metadata']);
    expect(tools.filter((tool) => needsApproval(tool)).map((tool) => tool.name)).toEqual([
      'update_page_metadata',
    ]);
    expect(tools.filter((tool) => tool.preview !== undefined).map((tool) => tool.name)).toEqual([
      'update_page_metadata',
    ]);
  });
});
