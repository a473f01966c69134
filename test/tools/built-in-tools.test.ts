import { describe, expect, it } from 'vitest';
import { needsApproval, TOOL_NAME_PATTERN } from '../../lambdas/core/tools/tool.js';
import { createBuiltInTools } from '../../lambdas/tools/built-in-tools.js';

describe('createBuiltInTools', () => {
  it('registers the three page readers and the one writer, and only the writer needs approval', () => {
    // Act
    const tools = createBuiltInTools();
    const names = tools.map((tool) => tool.name);

    // Assess
    expect(names.every((name) => TOOL_NAME_PATTERN.test(name))).toBe(true);
    expect(names).toEqual(['get_page', 'list_pages', 'search_pages', 'update_page_metadata']);
    expect(tools.filter((tool) => needsApproval(tool)).map((tool) => tool.name)).toEqual([
      'update_page_metadata',
    ]);
    expect(tools.filter((tool) => tool.preview !== undefined).map((tool) => tool.name)).toEqual([
      'update_page_metadata',
    ]);
  });
});
