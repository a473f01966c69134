import * as z from 'zod/mini';
import type { CardCallView } from '../approvals/build-card-call-views.js';
import type { CardView } from '../approvals/card-reader.js';
import { revealHiddenCharacters } from '../reveal-hidden-characters.js';
import { TEXTS } from '../texts.js';

/** A Block Kit block, as chat.postMessage and chat.update take it. */
export type SlackBlock = Readonly<Record<string, unknown>>;

/** A message as Slack's API takes it: the notification text and the blocks shown. */
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/** The `action_id`s of a card message's buttons; `open` is a link button (Slack still reports its click). */
export const SLACK_ACTIONS = {
  approve: 'countersign.approve',
  reject: 'countersign.reject',
  open: 'countersign.open',
} as const;

/** What an Approve or Reject button carries back: the card it was shown for (its turn and digest). */
export const slackButtonValueSchema = z.strictObject({
  runId: z.string().check(z.minLength(1), z.maxLength(200)),
  turn: z.number().check(z.int(), z.nonnegative()),
  digest: z.string().check(z.minLength(1), z.maxLength(200)),
});
export type SlackButtonValue = z.infer<typeof slackButtonValueSchema>;

// Block Kit's limits: 3,000 characters of section text, 50 blocks a message. A message shows at
// most this many calls, each in one section of at most this many characters, and points to the
// card for the rest; a value is cut before it is escaped, so a cut never splits an entity.
const MAX_CALLS_SHOWN = 10;
const MAX_SECTION_CHARACTERS = 2_800;
const MAX_VALUE_CHARACTERS = 300;
const MAX_LABEL_CHARACTERS = 150;

/**
 * Text as Slack's mrkdwn shows it literally: hidden and bidi characters drawn as markers
 * (`⟨U+202E⟩`, as on every surface), whitespace collapsed to one line, and `&`, `<` and `>`
 * escaped as Slack documents ("Escaping text"), so a value can neither link, nor mention
 * (`<!channel>`, `<@U123>`), nor quote. Text objects also carry `verbatim`, so Slack does not
 * turn a bare `@here` or a URL into a mention or a link either.
 *
 * @example
 * escapeSlackText('<!channel> Old \u202Etext & more') // '&lt;!channel&gt; Old ⟨U+202E⟩text &amp; more'
 */
export function escapeSlackText(value: string): string {
  return revealHiddenCharacters(value)
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/**
 * The message of a waiting card, viewed as the channel's least-privileged approver sees it
 * (`deriveChannelViewer`): the run's label and owner, each call with its arguments and its
 * before → after preview (bounded; a withheld preview stays withheld, with the caveat), the
 * deadline, the k-of-n tally, and Approve and Reject buttons (Reject only when nothing would run)
 * beside a link to the card's page.
 *
 * @example
 * const message = formatUndecidedCardSlackMessage(view, cardPageUrl(inboxUrl, view.runId));
 * await slack.postMessage({ channel: 'C0123', ...message });
 */
export function formatUndecidedCardSlackMessage(view: CardView, cardUrl: string): SlackMessage {
  const label = escapeSlackText(cut(view.label, MAX_LABEL_CHARACTERS));
  const shown = view.pendingTools.slice(0, MAX_CALLS_SHOWN);
  const hiddenCalls = view.pendingTools.length - shown.length;
  const anyRuns = view.pendingTools.some((call) => call.willRun);
  const value = JSON.stringify({
    runId: view.runId,
    turn: view.turn,
    digest: view.digest,
  } satisfies SlackButtonValue);
  const reached = view.escalation?.steps.filter((step) => step.reached) ?? [];
  const notes = [
    ...(reached.length > 0 ? [TEXTS.channelEscalated(reached.flatMap((step) => step.approverGroups))] : []),
    ...(hiddenCalls > 0 ? [TEXTS.channelMoreCalls(hiddenCalls)] : []),
    ...(view.approvals ? [view.approvals.summary] : []),
    ...(anyRuns ? [] : [TEXTS.channelNothingRuns]),
  ];
  return {
    text: `${TEXTS.channelApprovalNeeded}: ${label}`,
    blocks: [
      section(`*${TEXTS.channelApprovalNeeded}:* ${label}`),
      context(
        [
          escapeSlackText(TEXTS.channelRunBy(view.owner)),
          `${escapeSlackText(TEXTS.approvalWindowCloses)} ${slackDate(view.expiresAt)}`,
          `run ${escapeSlackText(view.runId)}`,
        ].join(' · '),
      ),
      ...shown.map((call) => section(formatCallLine(call))),
      ...(notes.length > 0 ? [context(notes.map(escapeSlackText).join(' · '))] : []),
      {
        type: 'actions',
        block_id: 'countersign',
        elements: [
          ...(anyRuns
            ? [button(SLACK_ACTIONS.approve, TEXTS.channelApprove, { style: 'primary', value })]
            : []),
          button(SLACK_ACTIONS.reject, TEXTS.channelReject, { style: 'danger', value }),
          button(SLACK_ACTIONS.open, TEXTS.channelCardLink, { url: cardUrl }),
        ],
      },
    ],
  };
}

/**
 * The message of a card that takes no more decisions: what happened to it (`outcome`, a
 * sentence of TEXTS), and the link to its page. No buttons are left to press.
 *
 * @example
 * formatClosedCardSlackMessage({ label, cardUrl, outcome: TEXTS.channelDecided('approve', 'ana', 'slack') });
 */
export function formatClosedCardSlackMessage(input: {
  readonly label: string;
  readonly cardUrl: string;
  readonly outcome: string;
}): SlackMessage {
  const label = escapeSlackText(cut(input.label, MAX_LABEL_CHARACTERS));
  const outcome = escapeSlackText(input.outcome);
  return {
    text: `${outcome} ${label}`,
    blocks: [
      section(`*${label}*\n${outcome}`),
      {
        type: 'actions',
        block_id: 'countersign',
        elements: [button(SLACK_ACTIONS.open, TEXTS.channelCardLink, { url: input.cardUrl })],
      },
    ],
  };
}

/** One call: its tool and arguments, then its preview's lines while they fit one section. */
function formatCallLine(call: CardCallView): string {
  const heading = `*${call.index + 1}. ${escapeSlackText(call.tool)}*${call.willRun ? '' : ` — ${escapeSlackText(TEXTS.callWillNotRun)}`}`;
  const lines = [heading, escapeSlackText(cut(JSON.stringify(call.arguments) ?? '', MAX_VALUE_CHARACTERS))];
  if (call.recordChanged !== undefined) lines.push(`_${escapeSlackText(call.recordChanged)}_`);
  const preview = call.preview;
  const previewLines = 'lines' in preview ? preview.lines : [];
  const closing =
    preview.status === 'shown'
      ? preview.caveat
      : preview.status === 'withheld'
        ? TEXTS.channelPreviewWithheld
        : 'message' in preview
          ? preview.message
          : undefined;
  const tail = closing === undefined ? [] : [`_${escapeSlackText(closing)}_`];
  let length = [...lines, ...tail].join('\n').length;
  for (const [position, line] of previewLines.entries()) {
    const quoted = `> ${escapeSlackText(cut(line, MAX_VALUE_CHARACTERS))}`;
    const more = TEXTS.channelMoreLines(previewLines.length - position);
    if (length + quoted.length + more.length + 2 > MAX_SECTION_CHARACTERS) {
      lines.push(`> ${escapeSlackText(more)}`);
      break;
    }
    lines.push(quoted);
    length += quoted.length + 1;
  }
  return [...lines, ...tail].join('\n');
}

/** A deadline in the reader's own time zone (Slack's date formatting), the ISO time as its fallback. */
function slackDate(iso: string): string {
  const seconds = Math.floor(Date.parse(iso) / 1000);
  return Number.isFinite(seconds)
    ? `<!date^${seconds}^{date_short_pretty} {time}|${escapeSlackText(iso)}>`
    : escapeSlackText(iso);
}

function section(text: string): SlackBlock {
  return { type: 'section', text: { type: 'mrkdwn', text, verbatim: true } };
}

function context(text: string): SlackBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text, verbatim: true }] };
}

function button(
  actionId: string,
  text: string,
  options: { style?: 'primary' | 'danger'; value?: string; url?: string },
): SlackBlock {
  return {
    type: 'button',
    action_id: actionId,
    text: { type: 'plain_text', text, emoji: false },
    ...options,
  };
}

/** At most `maximum` code points of `value`, marked with `…` when cut. */
function cut(value: string, maximum: number): string {
  const characters = [...value];
  return characters.length <= maximum ? value : `${characters.slice(0, maximum).join('')}…`;
}
