import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import type { RunStateCall as PendingCall } from '../../../lambdas/core/approvals/pending-call.js';
import { resolveCalls } from '../../../lambdas/core/approvals/resolve-calls.js';
import {
  capturePreconditions,
  checkPreconditions,
  UNREADABLE_PRECONDITION,
} from '../../../lambdas/core/runs/record-preconditions.js';
import { defineTool, type Tool, ToolRegistry } from '../../../lambdas/core/tools/tool.js';
import { createToolContext, editor } from '../../tools/page-tool-fixtures.js';

/** A relative writer whose version is whatever `versions` says now (or a throw). */
function createGuardedTool(versions: Map<string, string | Error>): Tool {
  return defineTool({
    name: 'increment_counter',
    description: 'Adds one to a counter.',
    effect: 'write',
    input: z.strictObject({ counterId: z.string() }),
    execute: async () => ({ content: 'ok', isError: false }),
    readPrecondition: async ({ counterId }) => {
      const version = versions.get(counterId);
      if (version instanceof Error) throw version;
      return version ?? 'none';
    },
  }) as Tool;
}

const logger = { debug() {}, info() {}, warn() {}, error() {} };

function call(index: number, overrides: Partial<PendingCall> = {}): PendingCall {
  return {
    index,
    callId: `call-${index}`,
    tool: 'increment_counter',
    arguments: { counterId: `c${index}` },
    offered: true,
    ...overrides,
  };
}

describe('record preconditions', () => {
  it('seals each guarded call version, a value no version equals for one it cannot read, and none for the rest', async () => {
    // Prepare
    const failure = new Error('database password is hunter2');
    failure.name = 'DatabaseError';
    const versions = new Map<string, string | Error>([
      ['c0', 'v1'],
      ['c1', failure],
    ]);
    const tools = new ToolRegistry([createGuardedTool(versions)]);
    const input = { actingUser: editor, context: createToolContext(editor), logger };

    // Act
    const sealed = await capturePreconditions(
      resolveCalls(
        [call(0), call(1), call(2, { offered: false }), call(3, { arguments: { wrong: true } })],
        tools,
      ),
      input,
    );

    // Assess: not offered and refused arguments run nothing, so they guard nothing.
    expect(sealed.map((entry) => entry.call.precondition)).toEqual([
      'v1',
      UNREADABLE_PRECONDITION,
      undefined,
      undefined,
    ]);
  });

  it('reports a change, a version sealed before a tool opted in, and an unreadable version apart', async () => {
    // Prepare
    const versions = new Map<string, string | Error>([
      ['c0', 'v1'],
      ['c1', 'v2'],
    ]);
    const tools = new ToolRegistry([createGuardedTool(versions)]);
    const input = { actingUser: editor, context: createToolContext(editor), logger };
    const sealed = resolveCalls([call(0, { precondition: 'v1' }), call(1, { precondition: 'v2' })], tools);

    // Act & Assess: unchanged
    expect(await checkPreconditions(sealed, input)).toEqual({ kind: 'unchanged', unreadable: new Map() });

    // Act & Assess: one target changed
    versions.set('c1', 'v3');
    expect(await checkPreconditions(sealed, input)).toEqual({
      kind: 'changed',
      changedIndexes: new Set([1]),
    });

    // Act & Assess: a call sealed without a version (the tool opted in later) asks again
    versions.set('c1', 'v2');
    expect(
      await checkPreconditions(resolveCalls([call(0, { precondition: 'v1' }), call(1)], tools), input),
    ).toEqual({
      kind: 'changed',
      changedIndexes: new Set([1]),
    });

    // Act & Assess: unreadable now fails that call by class, and asks nobody again
    const failure = new Error('secret');
    failure.name = 'DatabaseError';
    versions.set('c1', failure);
    expect(await checkPreconditions(sealed, input)).toEqual({
      kind: 'unchanged',
      unreadable: new Map([[1, 'DatabaseError']]),
    });
  });
});
