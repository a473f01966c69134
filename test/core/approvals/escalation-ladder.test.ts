import '../../../lambdas/core/schema-messages.js';
import { describe, expect, it } from 'vitest';
import {
  escalatedGroupsOf,
  isCardRoutedTo,
  routedGroupsOf,
} from '../../../lambdas/core/approvals/card-routing.js';
import {
  escalationLadderSchema,
  escalationTimersOf,
  planCardEscalation,
} from '../../../lambdas/core/approvals/escalation-ladder.js';
import { configurationSchema } from '../../../lambdas/core/configurations.js';
import { formatSchemaIssues } from '../../../lambdas/core/schema-messages.js';
import { person } from '../runs/use-case-harness.js';

const PAUSED_AT = new Date('2026-03-01T10:00:00.000Z');
const EXPIRES_AT = new Date('2026-03-01T12:00:00.000Z');

describe('escalation ladder', () => {
  it.each([
    [
      [
        { afterMinutes: 30, approverGroups: ['leads'] },
        { afterMinutes: 30, approverGroups: ['cto'] },
      ],
      '1.afterMinutes: must be later than step 0 (30 minutes)',
    ],
    [[{ afterMinutes: 0, approverGroups: ['leads'] }], '0.afterMinutes'],
    [[{ afterMinutes: 30, approverGroups: [] }], '0.approverGroups'],
    [[{ afterMinutes: 30, approverGroups: ['le#ads'] }], '0.approverGroups.0'],
    [[{ afterMinutes: 30, approverGroups: ['leads'], after: 1 }], '0.after: unknown field'],
    [[], 'Too small'],
    [
      Array.from({ length: 6 }, (_unused, step) => ({ afterMinutes: step + 1, approverGroups: ['leads'] })),
      'Too big',
    ],
  ])('refuses a ladder that is not strictly later step by step, naming where: %j', (ladder, problem) => {
    // Act
    const parsed = escalationLadderSchema.safeParse(ladder);

    // Assess
    expect(parsed.success).toBe(false);
    expect(formatSchemaIssues(parsed.error?.issues ?? [])).toContain(problem);
  });

  it('is a configuration field, named by its path when it is wrong', () => {
    // Act
    const parsed = configurationSchema.safeParse({
      configurationId: 'c',
      label: 'C',
      provider: 'scripted',
      model: 'scripted',
      escalation: [
        { afterMinutes: 60, approverGroups: ['leads'] },
        { afterMinutes: 10, approverGroups: ['cto'] },
      ],
    });

    // Assess
    expect(formatSchemaIssues(parsed.error?.issues ?? [], 'body')).toBe(
      'body.escalation.1.afterMinutes: must be later than step 0 (60 minutes)',
    );
  });

  it('puts each step at the pause plus its minutes, and leaves out those the window never reaches', () => {
    // Act
    const escalation = planCardEscalation(
      [
        { afterMinutes: 0.5, approverGroups: ['leads', 'leads'] },
        { afterMinutes: 90, approverGroups: ['directors', 'cto'] },
        { afterMinutes: 120, approverGroups: ['board'] },
      ],
      PAUSED_AT,
      EXPIRES_AT,
    );

    // Assess
    expect(escalation).toEqual({
      steps: [
        { at: '2026-03-01T10:00:30.000Z', approverGroups: ['leads'] },
        { at: '2026-03-01T11:30:00.000Z', approverGroups: ['cto', 'directors'] },
      ],
      reached: 0,
      notified: 0,
    });
    expect(planCardEscalation(undefined, PAUSED_AT, EXPIRES_AT)).toBeUndefined();
    expect(
      planCardEscalation([{ afterMinutes: 120, approverGroups: ['x'] }], PAUSED_AT, EXPIRES_AT),
    ).toBeUndefined();
  });

  it('routes a card to the groups of the steps reached, never narrowing a card routed to everyone', () => {
    // Prepare
    const escalation = {
      steps: [
        { at: '2026-03-01T10:30:00.000Z', approverGroups: ['leads'] },
        { at: '2026-03-01T11:00:00.000Z', approverGroups: ['directors'] },
      ],
      reached: 1,
      notified: 1,
    };
    const lead = person('lena', { groups: ['leads'] });
    const director = person('dora', { groups: ['directors'] });

    // Act
    const routed = { approverGroups: ['finance'], escalation };
    const everyone = { escalation };

    // Assess
    expect(escalatedGroupsOf(routed)).toEqual(['leads']);
    expect(routedGroupsOf(routed)).toEqual(['finance', 'leads']);
    expect(isCardRoutedTo(routed, lead)).toBe(true);
    expect(isCardRoutedTo(routed, director)).toBe(false);
    expect(routedGroupsOf(everyone)).toEqual([]);
    expect(isCardRoutedTo(everyone, director)).toBe(true);
  });

  it('arms a timer for every step not yet announced', () => {
    // Prepare
    const card = {
      runId: 'run-1',
      turn: 3,
      digest: 'd',
      escalation: {
        steps: [
          { at: '2026-03-01T10:30:00.000Z', approverGroups: ['leads'] },
          { at: '2026-03-01T11:00:00.000Z', approverGroups: ['directors'] },
        ],
        reached: 1,
        notified: 0,
      },
    };

    // Act
    const timers = escalationTimersOf(card);
    const later = escalationTimersOf({ ...card, escalation: { ...card.escalation, notified: 1 } });

    // Assess: a step routed but not yet announced is fired again, so its event goes out.
    expect(timers.map((timer) => timer.step)).toEqual([0, 1]);
    expect(later).toEqual([
      { runId: 'run-1', turn: 3, digest: 'd', step: 1, at: '2026-03-01T11:00:00.000Z' },
    ]);
    expect(escalationTimersOf({ runId: 'run-1', turn: 3, digest: 'd' })).toEqual([]);
  });
});
