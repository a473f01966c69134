import { describe, expect, it } from 'vitest';
import {
  contentOfChoices,
  kindOfChoices,
  resolveCallChoices,
} from '../../../lambdas/core/approvals/call-choices.js';
import { groupCallsDecidedTogether } from '../../../lambdas/core/approvals/decision-groups.js';
import { TEXTS } from '../../../lambdas/core/texts.js';

const CALLS = [
  { index: 0, tool: 'update_page_metadata' },
  { index: 1, tool: 'append_page_keywords' },
  { index: 2, tool: 'update_page_metadata' },
];

describe('per-call choices', () => {
  it('takes the body’s decision for every call it does not name, and each rejection’s own reason', () => {
    // Act
    const resolved = resolveCallChoices({
      calls: CALLS,
      decision: 'approve',
      reason: 'unused on approvals',
      overrides: [{ index: 1, decision: 'reject', reason: 'not these keywords' }],
      groups: [],
    });

    // Assess
    expect(resolved).toEqual({
      kind: 'resolved',
      choices: [
        { index: 0, tool: 'update_page_metadata', decision: 'approve' },
        { index: 1, tool: 'append_page_keywords', decision: 'reject', reason: 'not these keywords' },
        { index: 2, tool: 'update_page_metadata', decision: 'approve' },
      ],
    });
  });

  it('gives a rejected call without its own reason the body’s reason', () => {
    // Act
    const resolved = resolveCallChoices({
      calls: CALLS,
      decision: 'reject',
      reason: 'not now',
      overrides: [{ index: 2, decision: 'approve' }],
      groups: [],
    });

    // Assess
    expect(resolved.kind === 'resolved' && resolved.choices.map((choice) => choice.reason)).toEqual([
      'not now',
      'not now',
      undefined,
    ]);
  });

  it.each([
    [[{ index: 7, decision: 'reject' as const }], 'body.calls.0.index', TEXTS.callNotOnCard(7, 3)],
    [
      [
        { index: 1, decision: 'reject' as const },
        { index: 1, decision: 'approve' as const },
      ],
      'body.calls.1.index',
      TEXTS.choiceNamedTwice(1),
    ],
    [
      [{ index: 0, decision: 'approve' as const, reason: 'fine' }],
      'body.calls.0.reason',
      TEXTS.choiceReasonOnApproval,
    ],
  ])('refuses choices that cannot apply to the card, naming the field: %j', (overrides, field, message) => {
    // Act
    const resolved = resolveCallChoices({ calls: CALLS, decision: 'approve', overrides, groups: [] });

    // Assess
    expect(resolved).toEqual({ kind: 'refused', field, message });
  });

  it('refuses choices that split calls decided together, and keeps those that do not', () => {
    // Prepare: update_page_metadata ties its own calls (0 and 2)
    const groups = groupCallsDecidedTogether(CALLS, (tool) =>
      tool === 'update_page_metadata' ? ['update_page_metadata'] : undefined,
    );

    // Act
    const split = resolveCallChoices({
      calls: CALLS,
      decision: 'approve',
      overrides: [{ index: 2, decision: 'reject' }],
      groups,
    });
    const together = resolveCallChoices({
      calls: CALLS,
      decision: 'approve',
      overrides: [
        { index: 0, decision: 'reject' },
        { index: 2, decision: 'reject' },
      ],
      groups,
    });

    // Assess
    expect(groups).toEqual([[0, 2]]);
    expect(split).toEqual({
      kind: 'refused',
      field: 'body.calls',
      message: TEXTS.choicesSplitGroup([0, 2], ['update_page_metadata']),
    });
    expect(together.kind).toBe('resolved');
  });

  it('names what the choices amount to, and what two approvers must share to count together', () => {
    // Prepare
    const approveAll = CALLS.map((call) => ({ ...call, decision: 'approve' as const }));
    const partial = [
      ...approveAll.slice(0, 2),
      { index: 2, tool: 'update_page_metadata', decision: 'reject' as const, reason: 'a' },
    ];
    const partialOtherReason = [
      ...approveAll.slice(0, 2),
      { index: 2, tool: 'update_page_metadata', decision: 'reject' as const, reason: 'b' },
    ];

    // Act & Assess
    expect(kindOfChoices(approveAll)).toBe('approve');
    expect(kindOfChoices(partial)).toBe('partial');
    expect(kindOfChoices(partial.map((choice) => ({ ...choice, decision: 'reject' as const })))).toBe(
      'reject',
    );
    expect(contentOfChoices(partial)).toBe(contentOfChoices(partialOtherReason));
    expect(contentOfChoices(partial)).not.toBe(contentOfChoices(approveAll));
    expect(contentOfChoices([...partial].reverse())).toBe(contentOfChoices(partial));
  });
});

describe('calls decided together', () => {
  it('ties calls whose tools name each other, in either direction, and chains the ties', () => {
    // Act
    const groups = groupCallsDecidedTogether(
      [
        { index: 0, tool: 'transfer' },
        { index: 1, tool: 'get_page' },
        { index: 2, tool: 'ledger' },
        { index: 3, tool: 'notify' },
        { index: 4, tool: 'audit' },
      ],
      (tool) => ({ transfer: ['ledger'], notify: ['ledger'], audit: ['missing_tool'] })[tool],
    );

    // Assess
    expect(groups).toEqual([[0, 2, 3]]);
  });
});
