import { isCardRoutedTo } from '../approvals/card-routing.js';
import { isCardUndecided, type StoredCard } from '../approvals/stored-card.js';
import { nameErrorClass } from '../errors.js';
import { hasGrant, type UserProfile } from '../identity.js';
import { revealHiddenCharacters } from '../reveal-hidden-characters.js';
import type { RunDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';
import type { EmailChannel, Mail } from './email-ports.js';
import { listEveryUser } from './list-every-user.js';

/** What the email channel reads and writes: cards (plaintext only: a mail holds no preview), users, mail. */
export type EmailDependencies = Pick<RunDependencies, 'runs' | 'users' | 'clock' | 'logger' | 'metrics'> & {
  readonly email: EmailChannel;
};

/**
 * Mails a waiting card to each approver who may decide it and has an address (`email` on their
 * user record): one mail per card turn and approver (claimed first, so a repeated event sends
 * nothing twice), or, for an approver in digest mode (`emailDigestMinutes`), an entry in their
 * next digest ({@link mailDueDigests}). A mail carries the card's summary (label, owner, tools,
 * deadline) and its deep link, never a preview or an argument, and decides nothing: the link opens
 * the card after sign-in. A failed mail is given back and the error thrown, so the event is tried
 * again (and, after the retries, kept in the channel's dead-letter queue).
 *
 * @example
 * await mailWaitingCard(dependencies, event.runId); // after `Run Awaiting Approval`
 */
export async function mailWaitingCard(dependencies: EmailDependencies, runId: string): Promise<void> {
  const card = await dependencies.runs.getCard(runId);
  if (card === undefined || !isCardUndecided(card)) return;
  const recipients = (await listEveryUser(dependencies.users)).filter((user) => mayDecide(user, card));
  let failure: unknown;
  for (const user of recipients) {
    const address = user.email;
    if (address === undefined) continue;
    if (user.emailDigestMinutes !== undefined) {
      await dependencies.email.notifications.addToDigest(user.userId, runId);
      continue;
    }
    const key = { runId, turn: card.turn, userId: user.userId };
    if (!(await dependencies.email.notifications.claimMail(key, dependencies.clock.now().toISOString())))
      continue;
    try {
      await send(dependencies, {
        to: address,
        subject: oneLine(TEXTS.mailSubject(card.label)),
        text: [...formatCardLines(dependencies, card), '', TEXTS.mailFooter].join('\n'),
      });
    } catch (error) {
      await dependencies.email.notifications.releaseMail(key);
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}

/**
 * Sends each digest that is due: an approver's cards that waited since their last digest, in one
 * mail, at most one per `emailDigestMinutes`. A digest is taken (conditionally) before it is
 * mailed, so two schedules running at once mail it once; cards that closed meanwhile are left out,
 * and a digest whose cards all closed sends nothing.
 *
 * @example
 * await mailDueDigests(dependencies); // on the channel's schedule
 */
export async function mailDueDigests(dependencies: EmailDependencies): Promise<void> {
  const digests = await dependencies.email.notifications.listDigests();
  if (digests.length === 0) return;
  const users = new Map((await listEveryUser(dependencies.users)).map((user) => [user.userId, user]));
  const now = dependencies.clock.now();
  let failure: unknown;
  for (const digest of digests) {
    const user = users.get(digest.userId);
    const windowMilliseconds = (user?.emailDigestMinutes ?? 0) * 60_000;
    if (
      digest.lastSentAt !== undefined &&
      now.getTime() - Date.parse(digest.lastSentAt) < windowMilliseconds
    ) {
      continue;
    }
    if (!(await dependencies.email.notifications.takeDigest(digest, now.toISOString()))) continue;
    const address = user?.email;
    if (user === undefined || address === undefined) continue;
    const cards = (await Promise.all(digest.runIds.map((runId) => dependencies.runs.getCard(runId)))).filter(
      (card): card is StoredCard => card !== undefined && isCardUndecided(card) && mayDecide(user, card),
    );
    if (cards.length === 0) continue;
    try {
      await send(dependencies, {
        to: address,
        subject: TEXTS.mailDigestSubject(cards.length),
        text: [
          ...cards.flatMap((card) => [...formatCardLines(dependencies, card), '']),
          TEXTS.mailFooter,
        ].join('\n'),
      });
    } catch (error) {
      await dependencies.email.notifications.returnToDigest(digest.userId, digest.runIds);
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}

/** Who may decide a card: an approver it is routed to, never its owner under four-eyes. */
function mayDecide(user: UserProfile, card: StoredCard): boolean {
  return (
    hasGrant(user, 'agent_approve') &&
    isCardRoutedTo(card, user) &&
    !(card.fourEyes && user.userId === card.owner)
  );
}

/** A card's summary lines: every value one line, its hidden characters drawn as markers. */
function formatCardLines(dependencies: EmailDependencies, card: StoredCard): string[] {
  return TEXTS.mailCardLines({
    label: oneLine(card.label),
    owner: oneLine(card.owner),
    tools: card.toolNames.map(oneLine).join(', '),
    closesAt: card.expiresAt,
    link: dependencies.email.cardUrl(card.runId),
  });
}

function oneLine(value: string): string {
  return revealHiddenCharacters(value).replace(/\s+/g, ' ').trim();
}

async function send(dependencies: EmailDependencies, mail: Mail): Promise<void> {
  try {
    await dependencies.email.mail.sendMail(mail);
    dependencies.metrics.count('ChannelDeliveries', 1, { channel: 'email' });
  } catch (error) {
    dependencies.metrics.count('ChannelDeliveryFailures', 1, { channel: 'email' });
    dependencies.logger.error('mail not sent', { errorClass: nameErrorClass(error) });
    throw error;
  }
}
