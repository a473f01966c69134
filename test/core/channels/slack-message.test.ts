import { describe, expect, it } from 'vitest';
import type { CardCallView } from '../../../lambdas/core/approvals/build-card-call-views.js';
import type { CardView } from '../../../lambdas/core/approvals/card-reader.js';
import {
  escapeSlackText,
  formatClosedCardSlackMessage,
  formatUndecidedCardSlackMessage,
  SLACK_ACTIONS,
  type SlackBlock,
  slackButtonValueSchema,
} from '../../../lambdas/core/channels/slack-message.js';
import { TEXTS } from '../../../lambdas/core/texts.js';

const CARD_URL = 'https://abc.execute-api.eu-west-1.amazonaws.com/#run-run-1';

function call(index: number, overrides: Partial<CardCallView> = {}): CardCallView {
  return {
    index,
    tool: 'update_page_metadata',
    arguments: { pageId: '12', description: 'Spring sale' },
    registered: true,
    willRun: true,
    requiresApproval: true,
    editable: false,
    preview: {
      status: 'shown',
      lines: ['Page 12 (en): 1 field would change.', 'description: "Winter" → "Spring sale"'],
      caveat: TEXTS.previewCaveat,
    },
    ...overrides,
  };
}

function view(overrides: Partial<CardView> = {}): CardView {
  return {
    runId: 'run-1',
    owner: 'editor',
    label: 'Page metadata',
    turn: 1,
    pausedAt: '2026-03-02T09:15:00.000Z',
    expiresAt: '2026-03-09T09:10:00.000Z',
    digest: 'd'.repeat(64),
    pendingTools: [call(0)],
    ...overrides,
  };
}

const texts = (blocks: SlackBlock[]): string[] =>
  blocks.flatMap((block) => {
    const text = (block.text as { text?: string } | undefined)?.text;
    const elements = (block.elements as Array<{ text?: unknown }> | undefined) ?? [];
    return [
      ...(text === undefined ? [] : [text]),
      ...elements.flatMap((element) => (typeof element.text === 'string' ? [element.text] : [])),
    ];
  });
const buttons = (blocks: SlackBlock[]) =>
  blocks
    .filter((block) => block.type === 'actions')
    .flatMap((block) => block.elements as Array<{ action_id: string; value?: string; url?: string }>);

describe('escapeSlackText', () => {
  it.each([
    ['<!channel> now', '&lt;!channel&gt; now'],
    ['<@U0123> and <#C0123>', '&lt;@U0123&gt; and &lt;#C0123&gt;'],
    ['<https://evil.example|your bank>', '&lt;https://evil.example|your bank&gt;'],
    ['Tom & Jerry', 'Tom &amp; Jerry'],
    ['&lt; stays visible', '&amp;lt; stays visible'],
    ['> not a quote', '&gt; not a quote'],
  ])('escapes %j so Slack shows it literally', (value, escaped) => {
    expect(escapeSlackText(value)).toBe(escaped);
  });

  it('draws hidden and bidi characters as markers and keeps one line', () => {
    expect(escapeSlackText('Old \u202Etext\n> forged line\u200B')).toBe(
      'Old ⟨U+202E⟩text &gt; forged line⟨U+200B⟩',
    );
  });
});

describe('formatUndecidedCardSlackMessage', () => {
  it('shows the label, owner, deadline, each call with its preview and caveat, and the three buttons', () => {
    // Act
    const message = formatUndecidedCardSlackMessage(view(), CARD_URL);

    // Assess
    const shown = texts(message.blocks).join('\n');
    expect(message.text).toBe('Approval needed: Page metadata');
    expect(shown).toContain('*Approval needed:* Page metadata');
    expect(shown).toContain('started by editor');
    expect(shown).toContain('<!date^1773047400^{date_short_pretty} {time}|2026-03-09T09:10:00.000Z>');
    expect(shown).toContain('> description: "Winter" → "Spring sale"');
    expect(shown).toContain(`_${TEXTS.previewCaveat}_`);
    expect(buttons(message.blocks).map((button) => button.action_id)).toEqual([
      SLACK_ACTIONS.approve,
      SLACK_ACTIONS.reject,
      SLACK_ACTIONS.open,
    ]);
    expect(buttons(message.blocks)[2]?.url).toBe(CARD_URL);
    for (const block of message.blocks.filter((candidate) => candidate.type !== 'actions')) {
      expect(JSON.stringify(block)).toContain('"verbatim":true');
    }
  });

  it('binds both buttons to the card’s run, turn and digest', () => {
    // Act
    const [approve, reject] = buttons(formatUndecidedCardSlackMessage(view(), CARD_URL).blocks);

    // Assess
    for (const button of [approve, reject]) {
      expect(slackButtonValueSchema.parse(JSON.parse(button?.value ?? ''))).toEqual({
        runId: 'run-1',
        turn: 1,
        digest: 'd'.repeat(64),
      });
    }
  });

  it('keeps a withheld preview withheld, with the channel’s caveat', () => {
    // Act
    const message = formatUndecidedCardSlackMessage(
      view({ pendingTools: [call(0, { preview: { status: 'withheld', message: TEXTS.previewWithheld } })] }),
      CARD_URL,
    );

    // Assess
    const shown = texts(message.blocks).join('\n');
    expect(shown).toContain(TEXTS.channelPreviewWithheld);
    expect(shown).not.toContain('Winter');
  });

  it('escapes every value a model or a starter chose: label, tool, arguments and preview lines', () => {
    // Act
    const message = formatUndecidedCardSlackMessage(
      view({
        label: '<!here> urgent',
        pendingTools: [
          call(0, {
            tool: 'tool_<@U0BOSS>',
            arguments: { note: '<!channel>' },
            preview: {
              status: 'shown',
              lines: ['before → <https://x.example|ok>'],
              caveat: TEXTS.previewCaveat,
            },
          }),
        ],
      }),
      CARD_URL,
    );

    // Assess
    const serialized = JSON.stringify(message);
    expect(serialized).not.toMatch(/<!here>|<!channel>|<@U0BOSS>|<https:\/\/x\.example/);
    expect(serialized).toContain('&lt;!here&gt; urgent');
  });

  it('bounds what it shows: 10 calls at most, each section under Slack’s 3,000 characters', () => {
    // Prepare: 14 calls, each with 20 previews lines of 500 characters
    const long = Array.from({ length: 20 }, (_, line) => `${line}: ${'x'.repeat(495)}`);
    const calls = Array.from({ length: 14 }, (_, index) =>
      call(index, { preview: { status: 'shown', lines: long, caveat: TEXTS.previewCaveat } }),
    );

    // Act
    const message = formatUndecidedCardSlackMessage(view({ pendingTools: calls }), CARD_URL);

    // Assess
    const sections = texts(message.blocks);
    expect(message.blocks.length).toBeLessThanOrEqual(50);
    for (const text of sections) expect(text.length).toBeLessThanOrEqual(3000);
    expect(sections.filter((text) => text.includes('update_page_metadata'))).toHaveLength(10);
    expect(sections.join('\n')).toContain(TEXTS.channelMoreCalls(4));
    expect(sections.join('\n')).toMatch(/… \d+ more lines on the card\./);
  });

  it('offers only Reject when nothing on the card would run, and says so', () => {
    // Act
    const message = formatUndecidedCardSlackMessage(
      view({ pendingTools: [call(0, { willRun: false })] }),
      CARD_URL,
    );

    // Assess
    expect(buttons(message.blocks).map((button) => button.action_id)).toEqual([
      SLACK_ACTIONS.reject,
      SLACK_ACTIONS.open,
    ]);
    expect(texts(message.blocks).join('\n')).toContain(TEXTS.channelNothingRuns);
  });

  it('shows the k-of-n tally', () => {
    const message = formatUndecidedCardSlackMessage(
      view({
        approvals: {
          count: 1,
          required: 2,
          approvedBy: ['ana'],
          summary: TEXTS.approvalProgress(1, 2, ['ana']),
        },
      }),
      CARD_URL,
    );
    expect(texts(message.blocks).join('\n')).toContain('1 of 2 approvals — approved by ana');
  });
});

describe('formatClosedCardSlackMessage', () => {
  it('says what happened and keeps only the link', () => {
    // Act
    const message = formatClosedCardSlackMessage({
      label: 'Page <metadata>',
      cardUrl: CARD_URL,
      outcome: TEXTS.channelDecided('approve', 'ana', 'slack'),
    });

    // Assess
    expect(texts(message.blocks).join('\n')).toBe('*Page &lt;metadata&gt;*\nApproved by ana (Slack).');
    expect(buttons(message.blocks).map((button) => button.action_id)).toEqual([SLACK_ACTIONS.open]);
  });
});
