import { describe, expect, it } from 'vitest';
import { type InboxRouting, isCardInRouting } from '../../../lambdas/core/approvals/card-routing.js';

describe('isCardInRouting (what every inbox store checks on the cards it returns)', () => {
  const approver = (...groups: string[]): InboxRouting => ({ kind: 'groups', groups });

  it.each([
    ['an open card, any approver', {}, approver(), true],
    ['an open card (empty groups), any approver', { approverGroups: [] }, approver('finance'), true],
    ['a card of their group', { approverGroups: ['finance'] }, approver('finance'), true],
    [
      'a card of one of their ten groups',
      { approverGroups: ['legal', 'g9'] },
      approver(...Array.from({ length: 10 }, (_u, i) => `g${i}`)),
      true,
    ],
    ['a card of another group', { approverGroups: ['legal'] }, approver('finance'), false],
    ['a routed card, an approver without groups', { approverGroups: ['legal'] }, approver(), false],
    ['a routed card, an admin', { approverGroups: ['legal'] }, { kind: 'every' } as InboxRouting, true],
  ])('%s: %s', (_name, card, routing, expected) => {
    // Act
    const shown = isCardInRouting(card, routing);

    // Assess
    expect(shown).toBe(expected);
  });
});
