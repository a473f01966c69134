import { describe, expect, it } from 'vitest';
import { approvalDeadline } from '../../../lambdas/core/runs/put-fresh-card.js';

describe('approvalDeadline', () => {
  const pausedAt = new Date('2026-11-29T12:00:00.000Z');

  it('closes the card five minutes before a seven-day wait times out', () => {
    expect(approvalDeadline(pausedAt, 7 * 86_400).toISOString()).toBe('2026-12-06T11:55:00.000Z');
  });

  it('keeps the margin to 5 % of a short window, so the card is never born expired', () => {
    expect(approvalDeadline(pausedAt, 60).toISOString()).toBe('2026-11-29T12:00:57.000Z');
  });
});
