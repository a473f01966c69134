import { readStoredCard, viewCards } from '../approvals/card-reader.js';
import type { DecisionRecord } from '../approvals/decision-record.js';
import { type CardClosing, isCardUndecided, type StoredCard } from '../approvals/stored-card.js';
import { nameErrorClass } from '../errors.js';
import type { CardReaderDependencies, RunDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';
import { deriveChannelViewer } from './channel-viewer.js';
import {
  formatClosedCardSlackMessage,
  formatUndecidedCardSlackMessage,
  type SlackMessage,
} from './slack-message.js';
import type { SlackChannel, SlackMessageKey, SlackMessageRecord } from './slack-ports.js';
import { type SlackRoute, slackRoutesOfCard } from './slack-routes.js';

/** What the Slack channel reads and writes: the card reader, the users (for each route's viewer), and Slack. */
export type SlackDependencies = CardReaderDependencies &
  Pick<RunDependencies, 'users'> & { readonly slack: SlackChannel };

/**
 * A post claimed longer ago than this and never recorded was lost with its poster (a crash
 * between claim and record): the next sync posts it. Well over a post's own time (Slack answers
 * within seconds), so two live posters never both post.
 */
export const SLACK_POSTING_STALE_MILLISECONDS = 60_000;

/**
 * Brings a run's Slack messages in line with its card, from what is stored (never from the event
 * that woke it, so a repeated or late event changes nothing):
 * - a waiting card is posted once to each route that takes it (claimed before the post, keyed on
 *   run, turn and channel), viewed as the route's least-privileged approver; `refresh` re-renders
 *   the posted ones (a k-of-n tally moved);
 * - a message whose card closed, or moved on to a fresh turn, is updated to say what happened and
 *   loses its buttons: decided (by whom, on which channel), cancelled, expired, ended, reopened.
 *
 * `closed` names the closing the caller heard of (`Card Closed`): a card reopened for review is
 * replaced by its next turn's, so only the event still says why the earlier one closed.
 *
 * @example
 * await syncSlackMessages(dependencies, event.runId); // after `Run Awaiting Approval`
 */
export async function syncSlackMessages(
  dependencies: SlackDependencies,
  runId: string,
  options: { readonly refresh?: boolean; readonly closed?: { turn: number; because: CardClosing } } = {},
): Promise<void> {
  const [read, messages] = await Promise.all([
    readStoredCard(dependencies, runId),
    dependencies.slack.messages.listMessages(runId),
  ]);
  if (read.kind === 'none') return;
  if (read.kind === 'unopenable') {
    // The reader ended the run; its messages must not keep offering buttons.
    await closeMessages(dependencies, messages, () => Promise.resolve(TEXTS.cardUnopenable), read);
    return;
  }
  const stored = read.stored;
  const open = isCardUndecided(stored);
  await closeMessages(
    dependencies,
    messages.filter((message) => !open || message.turn !== stored.turn),
    (message) => formatOutcomeSentence(dependencies, stored, message, options.closed),
    read,
  );
  if (!open) return;
  const routes = slackRoutesOfCard(dependencies.slack.routes, stored);
  for (const route of routes) {
    const key = { runId, turn: stored.turn, channelId: route.channelId };
    const existing = messages.find(
      (message) => message.turn === key.turn && message.channelId === key.channelId,
    );
    if (existing?.state === 'closed') continue;
    if (existing?.state === 'open' && !options.refresh) continue;
    const message = await formatCardForRoute(dependencies, stored, route);
    if (message === undefined) {
      // The reader refused the card (and ended its run): no message of it may keep its buttons.
      await closeMessages(dependencies, messages, () => Promise.resolve(TEXTS.cardUnopenable), read);
      return;
    }
    if (existing?.state === 'open' && existing.ts !== undefined) {
      await deliver(dependencies, key, 'updated', () =>
        dependencies.slack.api.updateMessage({ channel: key.channelId, ts: existing.ts ?? '', ...message }),
      );
      continue;
    }
    await post(dependencies, key, message);
  }
}

/** The card as a route's least-privileged approver sees it; undefined when the card cannot be opened. */
async function formatCardForRoute(
  dependencies: SlackDependencies,
  stored: StoredCard,
  route: SlackRoute,
): Promise<SlackMessage | undefined> {
  const viewer = await deriveChannelViewer(dependencies.users, stored, {
    ...(route.approverGroup === undefined ? {} : { approverGroup: route.approverGroup }),
  });
  const [viewed] = await viewCards(dependencies, viewer, [stored]);
  if (viewed?.reading.kind !== 'viewed') return undefined;
  return formatUndecidedCardSlackMessage(viewed.reading.view, dependencies.slack.cardUrl(stored.runId));
}

/** Claims the post (once per key), posts, and records the message's `ts`; a failed post gives the claim back. */
async function post(
  dependencies: SlackDependencies,
  key: SlackMessageKey,
  message: SlackMessage,
): Promise<void> {
  const now = dependencies.clock.now();
  const staleBefore = new Date(now.getTime() - SLACK_POSTING_STALE_MILLISECONDS).toISOString();
  const claimed = await dependencies.slack.messages.claimPosting(key, now.toISOString(), staleBefore);
  if (!claimed) return;
  let ts: string;
  try {
    ({ ts } = await deliver(dependencies, key, 'posted', () =>
      dependencies.slack.api.postMessage({ channel: key.channelId, ...message }),
    ));
  } catch (error) {
    // The next attempt (the event's retry) may post at once instead of waiting out the claim.
    await dependencies.slack.messages.abandonPosting(key).catch(() => undefined);
    throw error;
  }
  await dependencies.slack.messages.recordPosted(key, ts, dependencies.clock.now().toISOString());
}

/** Updates each still-open message to its outcome, then records it closed (a failed update stays open, to be tried again). */
async function closeMessages(
  dependencies: SlackDependencies,
  messages: readonly SlackMessageRecord[],
  outcomeOf: (message: SlackMessageRecord) => Promise<string>,
  read: { kind: 'stored'; stored: StoredCard } | { kind: 'unopenable' },
): Promise<void> {
  const label = read.kind === 'stored' ? read.stored.label : '';
  for (const message of messages) {
    if (message.state === 'closed' || message.ts === undefined) continue;
    const ts = message.ts;
    const closed = formatClosedCardSlackMessage({
      label,
      cardUrl: dependencies.slack.cardUrl(message.runId),
      outcome: await outcomeOf(message),
    });
    await deliver(dependencies, message, 'updated', () =>
      dependencies.slack.api.updateMessage({ channel: message.channelId, ts, ...closed }),
    );
    await dependencies.slack.messages.recordClosed(message, dependencies.clock.now().toISOString());
  }
}

/** What happened to a message's turn, in a sentence: who decided it and where, or why it closed. */
async function formatOutcomeSentence(
  dependencies: SlackDependencies,
  stored: StoredCard,
  message: SlackMessageRecord,
  closed: { turn: number; because: CardClosing } | undefined,
): Promise<string> {
  const because =
    closed?.turn === message.turn
      ? closed.because
      : stored.turn === message.turn
        ? stored.closedBecause
        : undefined;
  // An approval on record whose record then changed was not applied: the fresh card says so.
  if (because === 'reopened') return TEXTS.channelClosed('reopened');
  const decision: DecisionRecord | undefined = await dependencies.runs.getDecision(
    message.runId,
    message.turn,
  );
  if (decision !== undefined && decision.decision !== 'cancel') {
    const refusedCalls = decision.choices?.filter((choice) => choice.decision === 'reject').length;
    return TEXTS.channelDecided(decision.decision, decision.decidedBy, decision.channel, {
      ...(decision.actingFor ? { actingFor: decision.actingFor } : {}),
      ...(refusedCalls ? { refusedCalls } : {}),
    });
  }
  return TEXTS.channelClosed(decision?.decision === 'cancel' ? 'cancelled' : (because ?? 'ended'));
}

/** One Slack call, counted (`ChannelDeliveries` or `ChannelDeliveryFailures`) and logged without its content. */
async function deliver<Result>(
  dependencies: SlackDependencies,
  key: SlackMessageKey,
  what: 'posted' | 'updated',
  call: () => Promise<Result>,
): Promise<Result> {
  try {
    const result = await call();
    dependencies.metrics.count('ChannelDeliveries', 1, { channel: 'slack' });
    dependencies.logger.info(`slack message ${what}`, {
      runId: key.runId,
      turn: key.turn,
      channel: key.channelId,
    });
    return result;
  } catch (error) {
    dependencies.metrics.count('ChannelDeliveryFailures', 1, { channel: 'slack' });
    dependencies.logger.error(`slack message not ${what}`, {
      runId: key.runId,
      turn: key.turn,
      channel: key.channelId,
      errorClass: nameErrorClass(error),
    });
    throw error;
  }
}
