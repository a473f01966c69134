import { unsealApprovalCard } from '../approvals/card-reader.js';
import type { StoredCard } from '../approvals/stored-card.js';
import type { StoredRun } from '../ports.js';
import type { ToolStepDependencies } from '../run-dependencies.js';
import { sealJson } from '../sealed-json.js';
import { unsealRunState } from './load-run.js';
import type { RunState } from './run-state.js';

/** What re-entering a wait needs: the card store and the sealer. */
export type ReenterWaitDependencies = Pick<
  ToolStepDependencies,
  'runs' | 'sealer' | 'newId' | 'logger' | 'metrics'
>;

/**
 * `renewed`: the card holds this attempt's token; `runWaits` when a first attempt failed before
 * the run was marked waiting (with `state` when the card's preconditions restore the state's).
 * `card-closed`: the card closed before the token went in (decided, or its run ended).
 */
export type RenewedCard =
  | { kind: 'renewed'; card: StoredCard; runWaits?: { state?: RunState } }
  | { kind: 'card-closed' };

/**
 * A retried or re-driven wait at a turn whose card is open: the new token goes into that card,
 * only while it stays open at its digest, so the previews and the digest stay those the
 * approver may already be deciding on.
 */
export async function reenterWait(
  dependencies: ReenterWaitDependencies,
  run: StoredRun,
  card: StoredCard,
  taskToken: string,
): Promise<RenewedCard> {
  const { runId, turn } = run.record;
  const waitId = dependencies.newId();
  const sealedToken = await sealJson(dependencies.sealer, 'task-token', runId, { taskToken });
  const renewed = await dependencies.runs.renewCardToken(runId, {
    turn,
    digest: card.digest,
    waitId,
    sealedToken,
  });
  if (renewed.kind === 'condition-failed') return { kind: 'card-closed' };
  if (run.record.status !== 'running') return { kind: 'renewed', card };
  const state = await restorePreconditions(dependencies, run, card);
  return { kind: 'renewed', card, runWaits: state ? { state } : {} };
}

/**
 * The run's state with the versions its card sealed, or `undefined` when the card sealed none:
 * execution compares against the state's versions, so they must be those the digest covers.
 */
async function restorePreconditions(
  dependencies: ReenterWaitDependencies,
  run: StoredRun,
  card: StoredCard,
): Promise<RunState | undefined> {
  const state = await unsealRunState(dependencies, run);
  // The versions restored are those the approval binds to: only from this turn's own card.
  const sealed = await unsealApprovalCard(dependencies.sealer, card);
  const versions = new Map(sealed.pendingCalls.map((call) => [call.index, call.precondition]));
  const calls: RunState['pendingCalls'] = state.pendingCalls.map(({ precondition: _unsealed, ...call }) => {
    const version = versions.get(call.index);
    return version === undefined ? call : { ...call, precondition: version };
  });
  const hasPreconditions = calls.some((call) => call.precondition !== undefined);
  return hasPreconditions ? { ...state, pendingCalls: calls } : undefined;
}
