import { CountersignError } from '../errors.js';
import { hasGrant, type UserProfile } from '../identity.js';
import { buildPendingTools, type PendingToolView } from '../previews/build-pending-tools.js';
import { TEXTS } from '../texts.js';
import { parseApprovalCard } from './approval-card.js';
import type { RunDependencies } from './run-dependencies.js';
import { unsealJson } from './sealed-json.js';

export const INBOX_PAGE_SIZE_DEFAULT = 20;
export const INBOX_PAGE_SIZE_MAX = 100;

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
}

type InboxDependencies = Pick<RunDependencies, 'runs' | 'sealer' | 'tools' | 'pages' | 'logger'> &
  Partial<Pick<RunDependencies, 'metrics'>>;

/**
 * The inbox: cards of runs waiting for a decision, newest first. One query per page; the
 * cards are unsealed (never the transcripts) and passed through the one pending-tools helper
 * with the viewer, so each preview meets the read gate.
 */
export async function listInbox(
  dependencies: InboxDependencies,
  viewer: UserProfile,
  options: { limit: number; cursor?: string },
): Promise<{ cards: InboxCard[]; cursor?: string }> {
  if (!hasGrant(viewer, 'agent_approve'))
    throw new CountersignError('forbidden', TEXTS.grantRefused('agent_approve'));
  const page = await dependencies.runs.listWaitingCards(options);
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
      return {
        runId: stored.runId,
        owner: stored.owner,
        label: stored.label,
        turn: stored.turn,
        pausedAt: stored.pausedAt,
        expiresAt: stored.expiresAt,
        digest: stored.digest,
        pendingTools: await buildPendingTools({
          card,
          viewer,
          tools: dependencies.tools,
          context: { runId: stored.runId, pages: dependencies.pages },
          logger: dependencies.logger,
        }),
      };
    }),
  );
  const withheld = cards
    .flatMap((card) => card.pendingTools)
    .filter((call) => call.preview.status === 'withheld');
  if (withheld.length > 0) dependencies.metrics?.count('PreviewsWithheld', withheld.length);
  return { cards, ...(page.cursor ? { cursor: page.cursor } : {}) };
}
