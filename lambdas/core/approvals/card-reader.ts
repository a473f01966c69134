import { delegatorReaching } from '../delegation/delegation.js';
import { CountersignError, isCountersignError } from '../errors.js';
import { hasGrant, isAdmin, type UserProfile } from '../identity.js';
import type { StateSealer } from '../ports.js';
import type { CardReaderDependencies } from '../run-dependencies.js';
import { unsealJson } from '../sealed-json.js';
import { TEXTS } from '../texts.js';
import { type ApprovalCard, parseApprovalCard } from './approval-card.js';
import { buildCardCallViews, type CardCallView } from './build-card-call-views.js';
import { buildCardPolicyView, type CardPolicyView } from './build-card-policy-view.js';
import type { CardContext, ContextText } from './card-context.js';
import { isCardRoutedTo } from './card-routing.js';
import type { CardEscalation } from './escalation-ladder.js';
import type { CardCall } from './pending-call.js';
import { type ResolvedCall, resolveCalls } from './resolve-calls.js';
import { isCardUndecided, type StoredCard } from './stored-card.js';
import {
  endRunWithUnopenableCard,
  reportSealedStateRejection,
  type UnopenableCard,
  unopenableCard,
} from './unopenable-card.js';

// THE card reader, for the inbox, the run view, the event stream, a call's arguments and the
// decision. A card it cannot open is refused in one place (refuseCard): reported, its run ended,
// and answered as its placeholder; a surface only chooses how to show that.

/** A card unsealed: the stored entry, the sealed card, and its calls resolved once. */
export interface UnsealedCard {
  stored: StoredCard;
  card: ApprovalCard;
  calls: Array<ResolvedCall<CardCall>>;
}

/** A card that could not be opened: reported and its run ended; the placeholder every surface shows. */
export interface CardRefusal {
  kind: 'unopenable';
  placeholder: UnopenableCard;
}

export type CardUnsealing = ({ kind: 'unsealed' } & UnsealedCard) | CardRefusal;

export type StoredCardRead = { kind: 'none' } | { kind: 'stored'; stored: StoredCard } | CardRefusal;

/**
 * One waiting card as one viewer sees it: the inbox shows all of it, GET /runs/{id} and the
 * `awaiting_approval` event the part they name (`lambdas/contract/run-schemas.ts`, cardViewSchema).
 */
export interface CardView {
  runId: string;
  owner: string;
  label: string;
  turn: number;
  pausedAt: string;
  expiresAt: string;
  digest: string;
  pendingTools: CardCallView[];
  /** k-of-n progress, when the turn needs more than one approver. */
  approvals?: CardPolicyView['approvals'];
  /** Why this viewer may not approve (rejecting stays possible); only to a viewer who may decide. */
  approveRefusal?: string;
  /** The approver groups the card was routed to; absent: every approver. */
  approverGroups?: string[];
  /** When and to whom the card escalates while unanswered; each step says whether it happened. */
  escalation?: EscalationView;
  /** Indexes of calls decided together (their tools declare it), each group ascending. */
  decidedTogether?: number[][];
  /**
   * Delegation: the approver who is away and whom this card reaches the viewer through (it is not
   * routed to the viewer themself); the viewer decides it acting for them.
   */
  actingFor?: string;
  /** The request, the model's reason and the owner's name (cards paused since they are captured). */
  context?: CardContextView;
}

/** A card's escalation as every surface shows it. */
export interface EscalationView {
  steps: Array<{ at: string; approverGroups: string[]; reached: boolean }>;
}

/**
 * A card's context as one viewer may read it. The request and the model's text may quote the
 * records the run read, so a viewer from whom a preview on the card is withheld (the read gate)
 * gets `withheld` instead of them; the run's owner and admins read them always.
 */
export interface CardContextView {
  ownerName?: string;
  request?: ContextText;
  reasoning?: ContextText;
  withheld?: string;
}

export type CardReading = { kind: 'viewed'; view: CardView } | CardRefusal;

/**
 * A run's stored card; an item that does not even parse cannot be opened (refused here).
 *
 * @example
 * const read = await readStoredCard(dependencies, runId);
 * if (read.kind === 'stored' && isCardUndecided(read.stored)) …
 */
export async function readStoredCard(
  dependencies: CardReaderDependencies,
  runId: string,
): Promise<StoredCardRead> {
  return refusingCard(dependencies, runId, async () => {
    const stored = await dependencies.runs.getCard(runId);
    return stored ? { kind: 'stored', stored } : { kind: 'none' };
  });
}

/**
 * Unseals the approval card under the card's run id (taken from the item's key), checks that it
 * seals the turn the plaintext names, and resolves its calls against the tools once. A refusal
 * is answered as `unopenable` (refused here); other errors pass.
 *
 * @example
 * const unsealed = await unsealCard(dependencies, stored);
 * if (unsealed.kind === 'unsealed') unsealed.calls[0]?.arguments.kind // 'accepted'
 */
export async function unsealCard(
  dependencies: CardReaderDependencies,
  stored: StoredCard,
): Promise<CardUnsealing> {
  return refusingCard(dependencies, stored.runId, async () => {
    const card = await unsealApprovalCard(dependencies.sealer, stored);
    return { kind: 'unsealed', stored, card, calls: resolveCalls(card.pendingCalls, dependencies.tools) };
  });
}

/**
 * The sealed card of a stored card, refused (`sealed-state-rejected`) unless it names the stored
 * card's run, turn and digest: a sealed card moved onto another item approves nothing there.
 */
export async function unsealApprovalCard(sealer: StateSealer, stored: StoredCard): Promise<ApprovalCard> {
  const card = parseApprovalCard(await unsealJson(sealer, 'approval-card', stored.runId, stored.sealedCard));
  if (card.runId !== stored.runId || card.turn !== stored.turn || card.digest !== stored.digest) {
    throw new CountersignError('sealed-state-rejected', 'The sealed approval card names another turn.');
  }
  return card;
}

/**
 * The task token sealed on a card, for the decision that resumes its run; a token that cannot
 * be opened makes the card unopenable (refused here).
 *
 * @example
 * const token = await unsealCardToken(dependencies, stored);
 * if (token.kind === 'unsealed') await executions.resume(token.taskToken, { kind: 'approve' });
 */
export async function unsealCardToken(
  dependencies: CardReaderDependencies,
  stored: StoredCard,
): Promise<{ kind: 'unsealed'; taskToken: string } | CardRefusal> {
  return refusingCard(dependencies, stored.runId, async () => {
    const sealed = await unsealJson(dependencies.sealer, 'task-token', stored.runId, stored.sealedToken);
    const taskToken = (sealed as { taskToken?: unknown } | null)?.taskToken;
    if (typeof taskToken !== 'string') {
      throw new CountersignError('sealed-state-rejected', 'The sealed task token has an unknown shape.');
    }
    return { kind: 'unsealed', taskToken };
  });
}

/**
 * Stored cards as `viewer` sees them, each beside its reading, in their order. Every card is
 * unsealed first and then all are viewed in the same tick, so their previews' read gates and
 * policy checks share one batch of page reads. Counts the previews the read gate withheld
 * (`PreviewsWithheld`).
 *
 * @example
 * const [first] = await viewCards(dependencies, approver, [stored]);
 * if (first?.reading.kind === 'viewed') first.reading.view.pendingTools[0]?.preview.status // 'shown'
 */
export async function viewCards(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  cards: readonly StoredCard[],
  /** The approvers away who named the viewer their delegate now (delegation). @default none */
  delegators: readonly UserProfile[] = [],
): Promise<Array<{ stored: StoredCard; reading: CardReading }>> {
  const unsealed = await Promise.all(
    cards.map(async (stored) => ({ stored, card: await unsealCard(dependencies, stored) })),
  );
  const readings = await Promise.all(
    unsealed.map(async ({ stored, card }) => ({
      stored,
      reading:
        card.kind === 'unsealed'
          ? { kind: 'viewed' as const, view: await viewCard(dependencies, viewer, card, delegators) }
          : card,
    })),
  );
  const withheld = readings
    .flatMap(({ reading }) => (reading.kind === 'viewed' ? reading.view.pendingTools : []))
    .filter((call) => call.preview.status === 'withheld').length;
  if (withheld > 0) dependencies.metrics.count('PreviewsWithheld', withheld);
  return readings;
}

/**
 * The run's card while it takes decisions, as `viewer` sees it (`none`: the run has no card, or
 * its card closed).
 *
 * @example
 * const reading = await viewWaitingCard(dependencies, owner, runId);
 * if (reading.kind === 'unopenable') show(reading.placeholder);
 */
export async function viewWaitingCard(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  runId: string,
): Promise<CardReading | { kind: 'none' }> {
  const read = await readStoredCard(dependencies, runId);
  if (read.kind === 'unopenable') return read;
  if (read.kind === 'none' || !isCardUndecided(read.stored)) return { kind: 'none' };
  const [viewed] = await viewCards(dependencies, viewer, [read.stored]);
  return viewed?.reading ?? { kind: 'none' };
}

/**
 * Refuses the cards of a listing whose items did not even parse, as a blob that does not open.
 *
 * @example
 * const placeholders = await refuseUnreadableCards(dependencies, page.unreadableRunIds ?? []);
 */
export async function refuseUnreadableCards(
  dependencies: CardReaderDependencies,
  runIds: readonly string[],
): Promise<UnopenableCard[]> {
  const refused = await Promise.all(
    runIds.map((runId) =>
      refuseCard(
        dependencies,
        runId,
        new CountersignError('sealed-state-rejected', 'The stored card has an unexpected shape.'),
      ),
    ),
  );
  return refused.map((card) => card.placeholder);
}

/** The previews through the read gate and the policy, built together so their page reads batch. */
async function viewCard(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  { stored, calls, card }: UnsealedCard,
  delegators: readonly UserProfile[],
): Promise<CardView> {
  const delegator = isCardRoutedTo(stored, viewer) ? undefined : delegatorReaching(stored, delegators);
  const [callViews, policy] = await Promise.all([
    buildCardCallViews({
      calls,
      viewer,
      context: { runId: stored.runId, pages: dependencies.pages },
      logger: dependencies.logger,
    }),
    buildCardPolicyView({
      stored,
      calls,
      viewer,
      delegator,
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
    pendingTools: callViews,
    ...(policy.approvals ? { approvals: policy.approvals } : {}),
    // Only a viewer who could decide is told why they may not approve.
    ...(policy.approveRefusal && hasGrant(viewer, 'agent_approve')
      ? { approveRefusal: policy.approveRefusal }
      : {}),
    ...(stored.approverGroups && stored.approverGroups.length > 0
      ? { approverGroups: stored.approverGroups }
      : {}),
    ...(stored.escalation ? { escalation: viewEscalation(stored.escalation) } : {}),
    ...(stored.decisionGroups && stored.decisionGroups.length > 0
      ? { decidedTogether: stored.decisionGroups }
      : {}),
    ...(delegator ? { actingFor: delegator.userId } : {}),
    ...(card.context ? { context: viewContext(card.context, viewer, stored, callViews) } : {}),
  };
}

function viewEscalation(escalation: CardEscalation): EscalationView {
  return {
    steps: escalation.steps.map((step, position) => ({
      at: step.at,
      approverGroups: step.approverGroups,
      reached: position < escalation.reached,
    })),
  };
}

/** The context, its texts withheld from a viewer the read gate withholds a preview on the card from. */
function viewContext(
  context: CardContext,
  viewer: UserProfile,
  stored: StoredCard,
  callViews: readonly CardCallView[],
): CardContextView {
  const { ownerName, request, reasoning } = context;
  const named = ownerName ? { ownerName } : {};
  const everything = stored.owner === viewer.userId || isAdmin(viewer);
  if (!everything && callViews.some((call) => call.preview.status === 'withheld')) {
    return request || reasoning ? { ...named, withheld: TEXTS.contextWithheld } : named;
  }
  return { ...named, ...(request ? { request } : {}), ...(reasoning ? { reasoning } : {}) };
}

/** Runs one read of a card's item or blobs: a refusal is the card's (refuseCard); other errors pass. */
async function refusingCard<Read>(
  dependencies: CardReaderDependencies,
  runId: string,
  read: () => Promise<Read>,
): Promise<Read | CardRefusal> {
  try {
    return await read();
  } catch (error) {
    if (!isCountersignError(error, 'sealed-state-rejected')) throw error;
    return refuseCard(dependencies, runId, error);
  }
}

/**
 * THE refusal of a card: one report (log line and `SealedStateRejections`, which alarms), and
 * its run ended, since such a card can never be decided; the placeholder is what surfaces show.
 */
async function refuseCard(
  dependencies: CardReaderDependencies,
  runId: string,
  error: unknown,
): Promise<CardRefusal> {
  reportSealedStateRejection(dependencies, runId, error);
  await endRunWithUnopenableCard(dependencies, runId);
  return { kind: 'unopenable', placeholder: unopenableCard(runId) };
}
