import { describe, expect, it } from 'vitest';
import { computeTurnDigest } from '../../../lambdas/core/approvals/turn-digest.js';

const calls = [
  { index: 0, tool: 'update_page_metadata', arguments: { pageId: '12', description: 'Spring sale' } },
];

describe('computeTurnDigest', () => {
  it('is stable for the same run, turn and calls whatever the key order', () => {
    // Act
    const first = computeTurnDigest('run-1', 2, calls);
    const second = computeTurnDigest('run-1', 2, [
      { tool: 'update_page_metadata', index: 0, arguments: { description: 'Spring sale', pageId: '12' } },
    ]);

    // Assess
    expect(first).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(second).toBe(first);
  });

  it('covers a sealed precondition, and digests a call without one exactly as before preconditions', () => {
    // Act
    const base = computeTurnDigest('run-1', 2, calls);
    const withVersion = computeTurnDigest('run-1', 2, [{ ...calls[0], precondition: 'sha256:a' }] as never);
    const otherVersion = computeTurnDigest('run-1', 2, [{ ...calls[0], precondition: 'sha256:b' }] as never);
    const undefinedVersion = computeTurnDigest('run-1', 2, [
      { ...calls[0], precondition: undefined },
    ] as never);

    // Assess: the pre-precondition digest of this call, pinned.
    expect(base).toBe(computeTurnDigest('run-1', 2, calls));
    expect(withVersion).not.toBe(base);
    expect(otherVersion).not.toBe(withVersion);
    expect(undefinedVersion).toBe(base);
  });

  it('changes when the arguments, the turn or the run change', () => {
    const base = computeTurnDigest('run-1', 2, calls);
    expect(computeTurnDigest('run-1', 3, calls)).not.toBe(base);
    expect(computeTurnDigest('run-2', 2, calls)).not.toBe(base);
    expect(
      computeTurnDigest('run-1', 2, [
        { ...calls[0], arguments: { pageId: '12', description: 'Spring sale!' } },
      ] as never),
    ).not.toBe(base);
  });
});
