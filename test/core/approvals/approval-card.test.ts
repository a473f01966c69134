import { describe, expect, it } from 'vitest';
import { parseApprovalCard } from '../../../lambdas/core/approvals/approval-card.js';

const header = { schemaVersion: 1, runId: 'run-1', turn: 1, digest: 'sha256:abc' };
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

describe('parseApprovalCard', () => {
  it('keeps a preview with its call when an earlier call is corrupt', () => {
    // Prepare: call 0 is unusable; the preview of call 1 must follow it to position 0.
    const raw = { ...header, pendingCalls: [{ index: 0 }, call(1)], callPreviews: [preview(0), preview(1)] };

    // Act
    const card = parseApprovalCard(raw);

    // Assess
    expect(card.pendingCalls).toEqual([
      { index: 0, tool: 'update_page_metadata', arguments: { pageId: '1' } },
    ]);
    expect(card.callPreviews).toEqual([
      { index: 0, tool: 'update_page_metadata', lines: ['preview 1'], failed: false },
    ]);
  });

  it('drops a preview that names a different tool than its call', () => {
    const raw = {
      ...header,
      pendingCalls: [call(0), call(1)],
      callPreviews: [preview(0, 'other_tool'), preview(1)],
    };
    const card = parseApprovalCard(raw);
    expect(card.callPreviews?.map((entry) => entry.index)).toEqual([1]);
  });

  it('reads a card sealed before previews existed, and malformed previews, as "no preview"', () => {
    expect(parseApprovalCard({ ...header, pendingCalls: [call(0)] }).callPreviews).toBeUndefined();
    expect(
      parseApprovalCard({ ...header, pendingCalls: [call(0)], callPreviews: 'garbage' }).callPreviews,
    ).toBeUndefined();
    expect(
      parseApprovalCard({ ...header, pendingCalls: [call(0)], callPreviews: [{ index: 'x' }] }).callPreviews,
    ).toEqual([]);
  });

  it('refuses a card of an unknown version', () => {
    expect(() => parseApprovalCard({ ...header, schemaVersion: 2, pendingCalls: [] })).toThrow(
      /unknown shape/,
    );
  });
});
