import { describe, expect, it } from 'vitest';
import type { CardCallView } from '../../../lambdas/core/approvals/build-card-call-views.js';
import type { CardView } from '../../../lambdas/core/approvals/card-reader.js';
import { TEXTS } from '../../../lambdas/core/texts.js';
import { renderCardCall, renderInboxCards } from '../../../lambdas/handlers/http/inbox-page.js';

const call: CardCallView = {
  index: 0,
  tool: 'update_page_metadata',
  arguments: { pageId: '12', title: 'Evil\u202Eroot', nested: [{ note: '\u200B' }, 3, true, null] },
  registered: true,
  willRun: true,
  requiresApproval: true,
  editable: false,
  preview: { status: 'shown', lines: ['title: "Old" → "Evil⟨U+202E⟩root"'], caveat: TEXTS.previewCaveat },
};

function cardWith(overrides: Partial<CardView> = {}): CardView {
  return {
    runId: 'run-\u202E1',
    owner: 'editor\u200B',
    label: 'Update \u2067page\u2069 metadata',
    turn: 1,
    pausedAt: '2026-03-02T09:15:00.000Z',
    expiresAt: '2026-03-09T09:10:00.000Z',
    digest: 'sha256:abc',
    pendingTools: [call],
    ...overrides,
  };
}

/** The text a browser would show: tags dropped, entities decoded. */
function textOf(html: string): string {
  return html
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

describe('renderInboxCards', () => {
  const beforeDeadline = new Date('2026-03-03T00:00:00.000Z');

  it('says on a call why it is decided as a write, and names a lapsed approver like any value (issue #20)', () => {
    // Prepare
    const card = cardWith({
      pendingTools: [{ ...call, effectUnconfirmed: TEXTS.effectUnconfirmed }],
      approvals: {
        count: 1,
        required: 2,
        approvedBy: ['reviewer'],
        lapsedApprovers: ['app\u202Erover'],
        summary: TEXTS.approvalProgress(1, 2, ['reviewer'], ['app\u202Erover']),
      },
    });

    // Act
    const html = renderInboxCards([card], undefined, beforeDeadline);

    // Assess
    expect(html).toContain(`<p class="effect-unconfirmed" role="alert">${TEXTS.effectUnconfirmed}</p>`);
    expect(html).toContain(
      '1 of 2 approvals — approved by <bdi>reviewer</bdi>; no longer counted: <bdi>app<span class="hidden-character">⟨U+202E⟩</span>rover</bdi>',
    );
  });

  it('shows who edited a call and each change, every value isolated, and offers refusing a call only on cards of several', () => {
    // Prepare
    const edited = {
      ...call,
      edited: {
        by: 'an\u202Ea',
        note: TEXTS.editedBy('an\u202Ea'),
        changes: [
          { kind: 'changed' as const, path: ['title'], before: 'Sale', after: '<b>Spring</b>' },
          { kind: 'added' as const, path: ['author'], after: 'Ana' },
        ],
        more: 2,
      },
    };
    const one = cardWith({ pendingTools: [edited] });
    const two = cardWith({ pendingTools: [edited, { ...call, index: 1 }] });

    // Act
    const htmlOne = renderInboxCards([one], undefined, beforeDeadline);
    const htmlTwo = renderInboxCards([two], undefined, beforeDeadline);

    // Assess
    expect(htmlOne).toContain('class="edited"');
    expect(htmlOne).toContain(
      '<bdi>Edited by an⟨U+202E⟩a</bdi>'.replace(
        '⟨U+202E⟩',
        '<span class="hidden-character">⟨U+202E⟩</span>',
      ),
    );
    expect(htmlOne).not.toContain('<b>Spring</b>');
    expect(textOf(htmlOne)).toContain('title: "Sale" → "<b>Spring</b>"');
    expect(textOf(htmlOne)).toContain('author: "Ana"');
    expect(textOf(htmlOne)).toContain(TEXTS.pageMoreChanges(2));
    expect(htmlOne).not.toContain('name="refuse"');
    expect(htmlTwo.match(/name="refuse"/g)).toHaveLength(2);
    expect(htmlTwo).toContain('name="refuse" value="1"');
  });

  it('isolates and marks every value an approver reads: label, run id, owner, tool, arguments, preview lines', () => {
    // Act
    const html = renderInboxCards([cardWith()], undefined, beforeDeadline);

    // Assess: no raw hidden character reaches the text shown (attributes keep exact values for
    // the requests the page makes), and each value sits in its own <bdi>.
    expect(textOf(html)).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B-\u200F]/);
    expect(html).toContain('<h2><bdi>Update <span class="hidden-character">⟨U+2067⟩</span>page');
    expect(html).toContain('<code><bdi>run-<span class="hidden-character">⟨U+202E⟩</span>1</bdi></code>');
    expect(html).toContain(
      '<strong><bdi>editor<span class="hidden-character">⟨U+200B⟩</span></bdi></strong>',
    );
    expect(html).toContain('<strong><bdi>update_page_metadata</bdi></strong>');
    expect(html).toContain(
      '<li><bdi>title: &quot;Old&quot; → &quot;Evil<span class="hidden-character">⟨U+202E⟩</span>root&quot;</bdi></li>',
    );
  });

  it('shows the groups a card was routed to, each isolated and marked, or that it went to every approver', () => {
    // Act
    const routed = renderInboxCards(
      [cardWith({ approverGroups: ['finance', 'le\u202Egal'] })],
      undefined,
      beforeDeadline,
    );
    const open = renderInboxCards([cardWith()], undefined, beforeDeadline);

    // Assess
    expect(routed).toContain(
      '<p class="routed">Routed to <bdi>finance</bdi>, <bdi>le<span class="hidden-character">⟨U+202E⟩</span>gal</bdi></p>',
    );
    expect(textOf(routed)).not.toMatch(/[\u202A-\u202E]/);
    expect(open).toContain('<p class="routed">Routed to every approver</p>');
  });

  it('draws the arguments as their JSON text, every key and string isolated', () => {
    // Act
    const html = renderCardCall(call);
    const arguments_ = /<pre class="arguments"[^>]*>([\s\S]*?)<\/pre>/.exec(html)?.[1] ?? '';

    // Assess
    expect(textOf(arguments_)).toBe(
      JSON.stringify(call.arguments, null, 2).replace('\u202E', '⟨U+202E⟩').replace('\u200B', '⟨U+200B⟩'),
    );
    expect(arguments_).toContain('<bdi>&quot;pageId&quot;</bdi>: <bdi>&quot;12&quot;</bdi>');
  });

  it('shows the pause and the deadline, and a card past its deadline closed with no decision to take', () => {
    // Act
    const open = renderInboxCards([cardWith()], undefined, beforeDeadline);
    const closed = renderInboxCards([cardWith()], undefined, new Date('2026-03-09T09:10:00.000Z'));

    // Assess
    expect(open).toContain('data-state="waiting"');
    expect(open).toContain('<time datetime="2026-03-09T09:10:00.000Z" data-when="2026-03-09T09:10:00.000Z">');
    expect(textOf(open)).toContain(`${TEXTS.pausedAt} 2026-03-02 09:15 UTC`);
    expect(textOf(open)).toContain(`${TEXTS.approvalWindowCloses} 2026-03-09 09:10 UTC`);
    expect(open).not.toContain(TEXTS.approvalWindowClosed);
    expect(closed).toContain('data-state="closed"');
    expect(closed).toContain(TEXTS.approvalWindowClosed);
    expect(closed).toContain('<button type="button" class="approve" disabled>');
    expect(closed).toContain('<button type="button" class="reject" disabled>');
  });

  it('says when nothing on a card would run, and offers only Reject', () => {
    // Act
    const html = renderInboxCards(
      [
        cardWith({
          pendingTools: [{ ...call, tool: 'delete_everything', registered: false, willRun: false }],
        }),
      ],
      undefined,
      beforeDeadline,
    );

    // Assess
    expect(html).toContain(TEXTS.toolNotRegistered);
    expect(html).toContain(TEXTS.nothingToApprove);
    expect(html).toContain('<button type="button" class="approve" disabled>');
    expect(html).toContain('<button type="button" class="reject">');
  });
});
