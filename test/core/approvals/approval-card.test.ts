import { describe, expect, it } from 'vitest';
import { parseApprovalCard } from '../../../lambdas/core/approvals/approval-card.js';

const header = { runId: 'run-1', turn: 1, digest: 'sha256:abc' };
const call = (index: number, tool = 'update_page_metadata') => ({
  index,
  tool,
  arguments: { pageId: String(index) },
});
const preview = (index: number, tool = 'update_page_metadata') => ({
  index,
  tool,
  lines: [`preview ${index}`],
  failed: false,
});

describe('parseApprovalCard, version 1 (previews beside the calls)', () => {
  const version1 = { ...header, schemaVersion: 1 };

  it('keeps a preview with its call when an earlier call is corrupt', () => {
    // Prepare: call 0 is unusable; the preview of call 1 must follow it to position 0.
    const raw = {
      ...version1,
      pendingCalls: [{ index: 0 }, call(1)],
      callPreviews: [preview(0), preview(1)],
    };

    // Act
    const card = parseApprovalCard(raw);

    // Assess
    expect(card.pendingCalls).toEqual([
      {
        index: 0,
        tool: 'update_page_metadata',
        arguments: { pageId: '1' },
        offered: true,
        preview: { lines: ['preview 1'], failed: false },
      },
    ]);
  });

  it('drops a preview that names a different tool than its call', () => {
    const raw = {
      ...version1,
      pendingCalls: [call(0), call(1)],
      callPreviews: [preview(0, 'other_tool'), preview(1)],
    };
    const card = parseApprovalCard(raw);
    expect(card.pendingCalls.map((entry) => entry.preview !== undefined)).toEqual([false, true]);
  });

  it('reads a card sealed before previews existed, and malformed previews, as "no preview"', () => {
    for (const callPreviews of [undefined, 'garbage', [{ index: 'x' }]]) {
      const card = parseApprovalCard({ ...version1, pendingCalls: [call(0)], callPreviews });
      expect(card.pendingCalls).toHaveLength(1);
      expect(card.pendingCalls[0]?.preview).toBeUndefined();
    }
  });
});

describe('parseApprovalCard, version 2 (each call with its preview)', () => {
  const version2 = { ...header, schemaVersion: 2 };

  it('drops an unusable call and renumbers the rest, each keeping its own preview', () => {
    const raw = {
      ...version2,
      pendingCalls: [
        { index: 0 },
        { ...call(1), offered: true, preview: { lines: ['preview 1'], failed: false } },
      ],
    };
    expect(parseApprovalCard(raw).pendingCalls).toEqual([
      {
        ...call(0),
        arguments: { pageId: '1' },
        offered: true,
        preview: { lines: ['preview 1'], failed: false },
      },
    ]);
  });

  it('keeps a call whose preview alone is malformed, without the preview', () => {
    const raw = { ...version2, pendingCalls: [{ ...call(0), offered: false, preview: { lines: 'x' } }] };
    expect(parseApprovalCard(raw).pendingCalls).toEqual([{ ...call(0), offered: false }]);
  });

  it('refuses a card of an unknown version', () => {
    expect(() => parseApprovalCard({ ...header, schemaVersion: 5, pendingCalls: [] })).toThrow(
      /unknown shape/,
    );
    expect(() => parseApprovalCard({ ...header, pendingCalls: [] })).toThrow(/unknown shape/);
  });
});
