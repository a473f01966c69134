import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { RunStateCall as PendingCall } from '../../../lambdas/core/approvals/pending-call.js';
import { resolveCalls } from '../../../lambdas/core/approvals/resolve-calls.js';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import type { Logger } from '../../../lambdas/core/ports.js';
import { capturePreviews } from '../../../lambdas/core/previews/capture-previews.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
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
  const previewed = await capturePreviews({
    calls: resolveCalls(calls, new ToolRegistry(tools as Tool[])),
    actingUser,
    context: { actingUser, runId: 'run-1', pages: undefined as never },
    logger,
    ...(timeBudgetMs ? { timeBudgetMs } : {}),
  });
  // Every call comes back, in order; the previews ride on their calls.
  expect(previewed.map((entry) => entry.index)).toEqual(calls.map((entry) => entry.index));
  const previews = previewed.flatMap(({ index, tool, preview }) =>
    preview ? [{ index, tool, ...preview }] : [],
  );
  return { previews, logger };
}

describe('capturePreviews', () => {
  it('turns a throwing preview into a flagged line that names only the error class', async () => {
    // Prepare
    class DatabaseError extends Error {
      public override readonly name = 'DatabaseError';
    }
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

  it('shows an error whose name carries text as "Error", and an unnamed subclass by its name, not its class', async () => {
    // Prepare: a driver that puts its message into `name`; a class that never set one.
    const driverError = Object.assign(new Error('x'), {
      name: "DriverError: Access denied for user 'admin'@'10.0.0.1'",
    });
    class UnnamedError extends Error {}
    const leaky = writer('leaky_write', async () => {
      throw driverError;
    });
    const unnamed = writer('unnamed_write', async () => {
      throw new UnnamedError('boom');
    });

    // Act
    const { previews, logger } = await capture([leaky, unnamed] as Tool[], [
      call(0, 'leaky_write'),
      call(1, 'unnamed_write'),
    ]);

    // Assess
    expect(previews.map((preview) => preview.lines)).toEqual([
      ['Preview failed (Error).'],
      ['Preview failed (Error).'],
    ]);
    expect(JSON.stringify([previews, logger.entries])).not.toContain('10.0.0.1');
  });

  it('previews arguments the tool would refuse as that refusal: one unflagged line, the tool never asked', async () => {
    // Prepare
    let asked = 0;
    const tool = writer('strict_write', async () => {
      asked += 1;
      return ['would write'];
    });
    const badCall: PendingCall = { ...call(0, 'strict_write'), arguments: { value: 42 } };

    // Act
    const { previews } = await capture([tool as Tool], [badCall]);

    // Assess
    expect(asked).toBe(0);
    expect(previews).toEqual([
      {
        index: 0,
        tool: 'strict_write',
        lines: [
          TEXTS.previewRefused('strict_write', 'value: Invalid input: expected string, received number'),
        ],
        failed: false,
        refused: true,
      },
    ]);
  });

  it('bounds a preview of 100,000 lines of 10,000 characters to what it keeps, inside the budget', async () => {
    // Prepare: the lines are counted as they are read.
    const line = `${'word '.repeat(1_999)}end\u202E`;
    let read = 0;
    const huge = new Proxy(new Array<string>(100_000).fill(line), {
      get(target, property, receiver) {
        if (typeof property === 'string' && /^\d+$/.test(property)) read += 1;
        return Reflect.get(target, property, receiver);
      },
    });
    const flood = writer('flood_write', async () => huge);

    // Act
    const { previews } = await capture([flood as Tool], [call(0, 'flood_write')]);

    // Assess
    const lines = previews[0]?.lines ?? [];
    expect(previews[0]?.failed).toBe(false);
    expect(lines).toHaveLength(20);
    expect(lines.every((kept) => kept.length <= 500)).toBe(true);
    expect(lines[19]).toBe('… 99,981 more lines not shown.');
    expect(read).toBeLessThanOrEqual(21);
  });
});
