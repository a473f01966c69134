import { CountersignError } from '../errors.js';
import { hasGrant, type UserProfile } from '../identity.js';
import { buildPendingTools, type PendingToolView } from '../previews/build-pending-tools.js';
import { TEXTS } from '../texts.js';
import { parseApprovalCard } from './approval-card.js';
import { type CardPolicyView, describeCardPolicy } from './describe-card-policy.js';
import type { RunDependencies } from './run-dependencies.js';
import { unsealJson } from './sealed-json.js';

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
}

type InboxDependencies = Pick<RunDependencies, 'runs' | 'sealer' | 'tools' | 'pages' | 'logger'> &
  Partial<Pick<RunDependencies, 'metrics' | 'settings'>>;

/**
 * The inbox: cards of runs waiting for a decision, newest first. One query per page; the
 * cards are unsealed (never the transcripts) and passed through the one pending-tools helper
 * with the viewer, so each preview meets the read gate.
 */
export async function listInbox(
  dependencies: InboxDependencies,
  viewer: UserProfile,
  options: {
    limit: number;
    cursor?: string;
    /** @default INBOX_PAGE_MAX_BYTES */
    maxBytes?: number;
    /** The bytes one card takes on the surface that answers. @default its JSON, UTF-8 */
    measureCard?: (card: InboxCard) => number;
  },
): Promise<{ cards: InboxCard[]; cursor?: string }> {
  if (!hasGrant(viewer, 'agent_approve'))
    throw new CountersignError('forbidden', TEXTS.grantRefused('agent_approve'));
  const page = await dependencies.runs.listWaitingCards({
    limit: options.limit,
    ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
  });
  const unsealed = await Promise.all(
    page.cards.map(async (stored) => ({
      stored,
      card: parseApprovalCard(
        await unsealJson(dependencies.sealer, 'approval-card', stored.runId, stored.sealedCard),
      ),
    })),
  );
  // Every card's read gate starts in the same tick, so its page reads become one batch (seed 000, cost).
  const cards = await Promise.all(
    unsealed.map(async ({ stored, card }): Promise<InboxCard> => {
      // The policy's record checks and the previews' read gate share one batch of page reads.
      const [pendingTools, policyView] = await Promise.all([
        buildPendingTools({
          card,
          viewer,
          tools: dependencies.tools,
          context: { runId: stored.runId, pages: dependencies.pages },
          logger: dependencies.logger,
        }),
        describeCardPolicy({
          stored,
          card,
          viewer,
          tools: dependencies.tools,
          pages: dependencies.pages,
          logger: dependencies.logger,
          floor: dependencies.settings?.policyFloor,
        }),
      ]);
      return {
        runId: stored.runId,
        owner: stored.owner,
        label: stored.label,
        turn: stored.turn,
        pausedAt: stored.pausedAt,
        expiresAt: stored.expiresAt,
        digest: stored.digest,
        pendingTools,
        ...policyView,
      };
    }),
  );
  const kept = keepWithinBytes(cards, options.maxBytes ?? INBOX_PAGE_MAX_BYTES, options.measureCard);
  const withheld = kept
    .flatMap((card) => card.pendingTools)
    .filter((call) => call.preview.status === 'withheld');
  if (withheld.length > 0) dependencies.metrics?.count('PreviewsWithheld', withheld.length);
  const last = kept.at(-1);
  const cursor =
    kept.length < cards.length && last !== undefined
      ? dependencies.runs.waitingCardCursor(last)
      : page.cursor;
  return { cards: kept, ...(cursor ? { cursor } : {}) };
}

/** The leading cards whose sizes together stay within `maxBytes`; never fewer than one. */
function keepWithinBytes(
  cards: InboxCard[],
  maxBytes: number,
  measureCard: (card: InboxCard) => number = measureJson,
): InboxCard[] {
  let total = INBOX_PAGE_ENVELOPE_BYTES;
  for (const [position, card] of cards.entries()) {
    total += measureCard(card) + 1;
    if (total > maxBytes && position > 0) return cards.slice(0, position);
  }
  return cards;
}

const encoder = new TextEncoder();

function measureJson(card: InboxCard): number {
  return encoder.encode(JSON.stringify(card)).byteLength;
}
