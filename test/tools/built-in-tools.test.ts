import { describe, expect, it } from 'vitest';
import { needsApproval, ToolRegistry } from '../../lambdas/core/tools/tool.js';
import { createBuiltInTools } from '../../lambdas/tools/built-in-tools.js';

describe('createBuiltInTools', () => {
  it('registers the three page readers and the two writers; only writers need approval, only the relative one a precondition', () => {
    // Act
    const tools = createBuiltInTools();
    const registry = new ToolRegistry(tools);

    // Assess
    expect(registry.names()).toEqual([
      'append_page_keywords',
      'get_page',
      'list_pages',
      'search_pages',
      'update_page_metadata',
    ]);
    expect(tools.filter((tool) => needsApproval(tool)).map((tool) => tool.name)).toEqual([
      'update_page_metadata',
      'append_page_keywords',
    ]);
    expect(tools.filter((tool) => tool.preview !== undefined).map((tool) => tool.name)).toEqual([
      'update_page_metadata',
      'append_page_keywords',
    ]);
    // Seed 000: the absolute writer keeps snapshot semantics; only the relative one opts in.
    expect(tools.filter((tool) => tool.readPrecondition !== undefined).map((tool) => tool.name)).toEqual([
      'append_page_keywords',
    ]);
  });
});
