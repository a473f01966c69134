import { CountersignError, isCountersignError } from '../errors.js';
import type { RunDependencies } from '../runs/run-dependencies.js';
import { unsealJson } from '../runs/sealed-json.js';
import { type ApprovalCard, parseApprovalCard } from './approval-card.js';
import type { CardCall } from './pending-call.js';
import { type ResolvedCall, resolveCalls } from './resolve-calls.js';
import { isCardOpen, type StoredCard } from './stored-card.js';
import { reportSealedStateRejection } from './unopenable-card.js';

/** A card as every reader uses it: the stored entry, the sealed card, and its calls resolved once. */
export interface OpenCard {
  stored: StoredCard;
  card: ApprovalCard;
  calls: Array<ResolvedCall<CardCall>>;
}

export type OpenedCard = ({ kind: 'opened' } & OpenCard) | { kind: 'unopenable' };

type ReportDependencies = Pick<RunDependencies, 'logger'> & Partial<Pick<RunDependencies, 'metrics'>>;
type OpenDependencies = Pick<RunDependencies, 'sealer' | 'tools'> & ReportDependencies;

/**
 * THE way a stored card is opened, for the inbox, the run view, the run's event stream and the
 * decision: unseals the approval card under the card's run id (taken from the item's key),
 * checks that it seals the turn the plaintext names, and resolves its calls against the tools
 * once. A refusal is reported here and answered as `unopenable`, so that a surface can isolate
 * it; other errors pass.
 *
 * @example
 * const opened = await openStoredCard(dependencies, stored);
 * if (opened.kind === 'opened') opened.calls[0]?.arguments.kind // 'accepted'
 */
export async function openStoredCard(
  dependencies: OpenDependencies,
  stored: StoredCard,
): Promise<OpenedCard> {
  try {
    const card = parseApprovalCard(
      await unsealJson(dependencies.sealer, 'approval-card', stored.runId, stored.sealedCard),
    );
    if (card.runId !== stored.runId || card.turn !== stored.turn || card.digest !== stored.digest) {
      throw new CountersignError('sealed-state-rejected', 'The sealed approval card names another turn.');
    }
    return { kind: 'opened', stored, card, calls: resolveCalls(card.pendingCalls, dependencies.tools) };
  } catch (error) {
    if (!isCountersignError(error, 'sealed-state-rejected')) throw error;
    reportSealedStateRejection(dependencies, stored.runId, error);
    return { kind: 'unopenable' };
  }
}

export type StoredCardRead =
  | { kind: 'none' }
  | { kind: 'unopenable' }
  | { kind: 'stored'; stored: StoredCard };

/**
 * A run's stored card; an item that does not even parse cannot be opened (reported here).
 *
 * @example
 * const read = await readStoredCard(dependencies, runId);
 * if (read.kind === 'stored' && isCardOpen(read.stored)) …
 */
export async function readStoredCard(
  dependencies: Pick<RunDependencies, 'runs'> & ReportDependencies,
  runId: string,
): Promise<StoredCardRead> {
  try {
    const stored = await dependencies.runs.getCard(runId);
    return stored ? { kind: 'stored', stored } : { kind: 'none' };
  } catch (error) {
    if (!isCountersignError(error, 'sealed-state-rejected')) throw error;
    reportSealedStateRejection(dependencies, runId, error);
    return { kind: 'unopenable' };
  }
}

/**
 * The open card of a run, opened: `not-open` when the run has no card or its card closed,
 * `unopenable` when its item or its sealed card is refused (reported).
 *
 * @example
 * const opened = await openRunCard(dependencies, runId);
 * if (opened.kind === 'opened') await buildPendingTools({ calls: opened.calls, viewer, context, logger });
 */
export async function openRunCard(
  dependencies: Pick<RunDependencies, 'runs'> & OpenDependencies,
  runId: string,
): Promise<OpenedCard | { kind: 'not-open' }> {
  const read = await readStoredCard(dependencies, runId);
  if (read.kind === 'unopenable') return read;
  if (read.kind === 'none' || !isCardOpen(read.stored)) return { kind: 'not-open' };
  return openStoredCard(dependencies, read.stored);
}
