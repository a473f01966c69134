import type { UserProfile } from '../identity.js';
import type { RunDependencies } from '../runs/run-dependencies.js';
import { buildPendingTools, type PendingToolView } from './build-pending-tools.js';
import { type CardPolicyView, describeCardPolicy } from './describe-card-policy.js';
import type { OpenCard } from './open-card.js';

/** What one viewer is shown of an open card: its calls through the read gate, and its policy. */
export interface OpenCardView extends CardPolicyView {
  pendingTools: PendingToolView[];
}

/**
 * An opened card as `viewer` sees it, for the readers that show a whole card (the inbox, GET
 * /runs/{id}). The policy's record checks and the previews' read gate share one batch of page reads.
 */
export async function describeOpenCard(
  dependencies: Pick<RunDependencies, 'tools' | 'pages' | 'logger'> &
    Partial<Pick<RunDependencies, 'settings'>>,
  viewer: UserProfile,
  { stored, calls }: OpenCard,
): Promise<OpenCardView> {
  const [pendingTools, policyView] = await Promise.all([
    buildPendingTools({
      calls,
      viewer,
      context: { runId: stored.runId, pages: dependencies.pages },
      logger: dependencies.logger,
    }),
    describeCardPolicy({
      stored,
      calls,
      viewer,
      pages: dependencies.pages,
      logger: dependencies.logger,
      floor: dependencies.settings?.policyFloor,
    }),
  ]);
  return { pendingTools, ...policyView };
}
