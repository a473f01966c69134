import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import type { Logger } from '../../../lambdas/core/ports.js';
import { capturePreviews } from '../../../lambdas/core/previews/capture-previews.js';
import type { PendingCall } from '../../../lambdas/core/runs/run-state.js';
import { defineTool, type Tool, ToolRegistry } from '../../../lambdas/core/tools/tool.js';

const actingUser: UserProfile = {
  userId: 'editor',
  displayName: 'Editor',
  grants: ['agent_run'],
  pageAccess: '*',
  languageAccess: '*',
  toolAccess: [],
};

function recordingLogger(): Logger & {
  entries: Array<{ level: string; message: string; fields?: unknown }>;
} {
  const entries: Array<{ level: string; message: string; fields?: unknown }> = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    entries.push({ level, message, fields });
  };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function writer(name: string, preview: Tool<{ value: string }>['preview']): Tool<{ value: string }> {
  return defineTool({
    name,
    description: name,
    effect: 'write',
    input: z.object({ value: z.string() }),
    execute: async () => ({ content: 'ok', isError: false }),
    ...(preview ? { preview } : {}),
  });
}

const call = (index: number, tool: string, offered = true): PendingCall => ({
  index,
  callId: `call-${index}`,
  tool,
  arguments: { value: `v${index}` },
  offered,
});

async function capture(tools: Tool<never>[] | Tool[], calls: PendingCall[], timeBudgetMs?: number) {
  const logger = recordingLogger();
  const previews = await capturePreviews({
    calls,
    tools: new ToolRegistry(tools as Tool[]),
    actingUser,
    context: { actingUser, runId: 'run-1', pages: undefined as never },
    logger,
    ...(timeBudgetMs ? { timeBudgetMs } : {}),
  });
  return { previews, logger };
}

describe('capturePreviews', () => {
  it('turns a throwing preview into a flagged line that names only the error class', async () => {
    // Prepare
    class DatabaseError extends Error {}
    const tool = writer('risky_write', async () => {
      throw new DatabaseError('Access denied for user x@host');
    });

    // Act
    const { previews, logger } = await capture([tool as Tool], [call(0, 'risky_write')]);

    // Assess
    expect(previews).toEqual([
      { index: 0, tool: 'risky_write', lines: ['Preview failed (DatabaseError).'], failed: true },
    ]);
    expect(JSON.stringify(previews)).not.toContain('Access denied');
    expect(JSON.stringify(logger.entries)).not.toContain('Access denied');
    expect(logger.entries).toContainEqual(
      expect.objectContaining({ level: 'warn', message: 'preview failed' }),
    );
  });

  it('treats an empty preview and a slow preview as failed lines', async () => {
    const empty = writer('empty_write', async () => []);
    const slow = writer('slow_write', () => new Promise(() => undefined));
    const { previews } = await capture(
      [empty, slow] as Tool[],
      [call(0, 'empty_write'), call(1, 'slow_write')],
      30,
    );
    expect(previews).toEqual([
      { index: 0, tool: 'empty_write', lines: ['Preview failed (EmptyPreview).'], failed: true },
      { index: 1, tool: 'slow_write', lines: ['Preview failed (PreviewTimeout).'], failed: true },
    ]);
  });

  it('never previews a call to a tool that was not offered to the model', async () => {
    // Prepare
    let asked = 0;
    const tool = writer('guarded_write', async () => {
      asked += 1;
      return ['would write'];
    });

    // Act
    const { previews } = await capture(
      [tool as Tool],
      [call(0, 'guarded_write', false), call(1, 'guarded_write')],
    );

    // Assess
    expect(asked).toBe(1);
    expect(previews.map((preview) => preview.index)).toEqual([1]);
  });

  it('bounds the lines before they are persisted', async () => {
    const verbose = writer('verbose_write', async () =>
      Array.from({ length: 30 }, () => `a  \n b${'c'.repeat(600)}`),
    );
    const { previews } = await capture([verbose as Tool], [call(0, 'verbose_write')]);
    expect(previews[0]?.lines).toHaveLength(20);
    expect(previews[0]?.lines.every((line) => line.length <= 500 && !/\s\s/.test(line))).toBe(true);
  });

  it('runs the previews of one turn concurrently', async () => {
    // Prepare: each preview waits for the other to have started.
    let started = 0;
    const rendezvous = writer('paired_write', async () => {
      started += 1;
      for (let attempt = 0; attempt < 50 && started < 2; attempt += 1)
        await new Promise((resolve) => setTimeout(resolve, 2));
      return [`saw ${started}`];
    });

    // Act
    const { previews } = await capture(
      [rendezvous as Tool],
      [call(0, 'paired_write'), call(1, 'paired_write')],
    );

    // Assess
    expect(previews.map((preview) => preview.lines[0])).toEqual(['saw 2', 'saw 2']);
  });
});
