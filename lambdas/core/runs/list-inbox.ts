import type { PendingToolView } from '../approvals/build-pending-tools.js';
import { type InboxRouting, inboxRoutingOf, isCardRoutedTo } from '../approvals/card-routing.js';
import type { CardPolicyView } from '../approvals/describe-card-policy.js';
import { describeOpenCard } from '../approvals/describe-open-card.js';
import type { InboxFilter, InboxOrder } from '../approvals/inbox-filter.js';
import { type OpenCard, openStoredCard } from '../approvals/open-card.js';
import type { StoredCard } from '../approvals/stored-card.js';
import {
  endRunWithUnopenableCard,
  reportSealedStateRejection,
  type UnopenableCard,
  unopenableCard,
} from '../approvals/unopenable-card.js';
import { CountersignError } from '../errors.js';
import { isAdmin, requireGrant, type UserProfile } from '../identity.js';
import type { CardReaderDependencies } from './run-dependencies.js';

export const INBOX_PAGE_SIZE_DEFAULT = 20;
export const INBOX_PAGE_SIZE_MAX = 100;
/**
 * An inbox page stops before its cards pass 1 MB as the surface renders them (JSON or the
 * page's HTML) and returns a cursor for the rest: Lambda refuses responses over 6 MB, and one
 * oversized page would fail for every approver. Its first card is always included, so paging
 * moves on; a card alone stays far below (arguments excerpted, at most 50 calls a turn).
 */
export const INBOX_PAGE_MAX_BYTES = 1_000_000;
/** Room kept under the bound for what a page wraps its cards in (the JSON envelope, the cursor). */
const INBOX_PAGE_ENVELOPE_BYTES = 4_096;

/** One card of the inbox, as the JSON API and the inbox page show it. */
export interface InboxCard {
  runId: string;
  owner: string;
  label: string;
  turn: number;
  pausedAt: string;
  expiresAt: string;
  digest: string;
  pendingTools: PendingToolView[];
  /** k-of-n progress, when the turn needs more than one approver. */
  approvals?: CardPolicyView['approvals'];
  /** Why this viewer may not approve (rejecting stays open); absent when they may. */
  approveRefusal?: string;
  /** The approver groups the card was routed to; absent: every approver. */
  approverGroups?: string[];
}

/** An inbox entry: a card, or the flagged placeholder of one that cannot be opened. */
export type InboxEntry = InboxCard | UnopenableCard;

/**
 * The inbox: cards of runs waiting for a decision and routed to the viewer (admins: all),
 * newest first. One query per index partition the viewer reaches and one read of the cards per page; the
 * cards are unsealed (never the transcripts) and passed through the one pending-tools helper
 * with the viewer, so each preview meets the read gate.
 *
 * Failures are isolated per card: a card that cannot be opened (tampered, copied from another
 * run, malformed) is listed as a placeholder, reported, and its run is ended; the other cards
 * of the page render as always.
 */
export async function listInbox(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  options: {
    limit: number;
    cursor?: string;
    /** @default 'newest' */
    order?: InboxOrder;
    /** Narrows the cards (GET /inbox's filters); matched before anything is unsealed. */
    filter?: InboxFilter;
    /** @default INBOX_PAGE_MAX_BYTES */
    maxBytes?: number;
    /** The bytes one card takes on the surface that answers. @default its JSON, UTF-8 */
    measureCard?: (card: InboxCard) => number;
  },
): Promise<{ cards: InboxEntry[]; cursor?: string }> {
  requireGrant(viewer, 'agent_approve');
  const routing = routingOf(viewer, options.filter);
  // A group the viewer is not in routes them nothing: an empty inbox, as for any card not theirs.
  if (routing === undefined) return { cards: [] };
  const listed = await dependencies.runs.listWaitingCards({
    limit: options.limit,
    routing,
    ...(options.order === undefined ? {} : { order: options.order }),
    ...(options.filter === undefined ? {} : { filter: options.filter }),
    ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
  });
  // The index partitions already route; the card's own groups decide, failing closed.
  const page = { ...listed, cards: listed.cards.filter((card) => isCardRoutedTo(card, viewer)) };
  const opened = await Promise.all(
    page.cards.map(async (stored) => ({ stored, opened: await openStoredCard(dependencies, stored) })),
  );
  const unopenableRunIds = [
    ...opened.filter((entry) => entry.opened.kind === 'unopenable').map((entry) => entry.stored.runId),
    ...reportUnreadable(dependencies, page.unreadableRunIds ?? []),
  ];
  // Every card's read gate starts in the same tick, so its page reads become one batch (seed 000, cost).
  const [entries] = await Promise.all([
    Promise.all(
      opened.map(
        async ({ stored, opened: card }): Promise<{ stored: StoredCard; entry: InboxEntry }> => ({
          stored,
          entry:
            card.kind === 'unopenable'
              ? unopenableCard(stored.runId)
              : await renderCard(dependencies, viewer, card),
        }),
      ),
    ),
    Promise.all(unopenableRunIds.map((runId) => endRunWithUnopenableCard(dependencies, runId))),
  ]);
  const kept = keepWithinBytes(entries, options.maxBytes ?? INBOX_PAGE_MAX_BYTES, options.measureCard);
  const withheld = kept
    .flatMap(({ entry }) => ('pendingTools' in entry ? entry.pendingTools : []))
    .filter((call) => call.preview.status === 'withheld');
  if (withheld.length > 0) dependencies.metrics.count('PreviewsWithheld', withheld.length);
  const last = kept.at(-1);
  const cursor =
    kept.length < entries.length && last !== undefined
      ? dependencies.runs.waitingCardCursor(last.stored, options.order)
      : page.cursor;
  // Items that did not even parse have no place in the order: their placeholders come last.
  const unreadable = (page.unreadableRunIds ?? []).map(unopenableCard);
  return { cards: [...kept.map(({ entry }) => entry), ...unreadable], ...(cursor ? { cursor } : {}) };
}

/** The partitions to read: the viewer's routes, or one group's when the inbox is filtered by it. */
function routingOf(viewer: UserProfile, filter: InboxFilter | undefined): InboxRouting | undefined {
  const group = filter?.group;
  if (group === undefined) return inboxRoutingOf(viewer);
  return isAdmin(viewer) || (viewer.groups ?? []).includes(group) ? { kind: 'group', group } : undefined;
}

async function renderCard(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  card: OpenCard,
): Promise<InboxCard> {
  const { stored } = card;
  return {
    runId: stored.runId,
    owner: stored.owner,
    label: stored.label,
    turn: stored.turn,
    pausedAt: stored.pausedAt,
    expiresAt: stored.expiresAt,
    digest: stored.digest,
    ...(await describeOpenCard(dependencies, viewer, card)),
    ...(stored.approverGroups && stored.approverGroups.length > 0
      ? { approverGroups: stored.approverGroups }
      : {}),
  };
}

/** The leading entries whose sizes together stay within `maxBytes`; never fewer than one. */
function keepWithinBytes<Entry extends { entry: InboxEntry }>(
  entries: Entry[],
  maxBytes: number,
  measureCard: (card: InboxCard) => number = measureJson,
): Entry[] {
  let total = INBOX_PAGE_ENVELOPE_BYTES;
  for (const [position, { entry }] of entries.entries()) {
    total += ('unopenable' in entry ? measureJson(entry) : measureCard(entry)) + 1;
    if (total > maxBytes && position > 0) return entries.slice(0, position);
  }
  return entries;
}

const encoder = new TextEncoder();

function measureJson(entry: InboxEntry): number {
  return encoder.encode(JSON.stringify(entry)).byteLength;
}

/** Card items that did not even parse are refused like a blob that does not open. */
function reportUnreadable(
  dependencies: CardReaderDependencies,
  runIds: readonly string[],
): readonly string[] {
  for (const runId of runIds) {
    reportSealedStateRejection(
      dependencies,
      runId,
      new CountersignError('sealed-state-rejected', 'The stored card has an unexpected shape.'),
    );
  }
  return runIds;
}
