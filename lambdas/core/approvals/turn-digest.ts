import { canonicalJson, sha256Hex } from '../canonical-json.js';
import type { PendingCall } from './pending-call.js';

/** What of a pending call the digest binds: the proposal, and a precondition where one was sealed. */
type DigestedCall = Pick<PendingCall, 'index' | 'tool' | 'arguments' | 'precondition'>;

/**
 * The turn digest: sha256 over the canonical JSON of the run id, the turn and its pending
 * calls. A decision names it, so a stale tab cannot approve a turn nobody looked at. It
 * binds the agent's proposal, and the target resource only where a tool opted into a
 * precondition (docs/previews.md: for an absolute write the preview is a snapshot, not a precondition).
 * A call without one digests exactly as before preconditions existed.
 *
 * @example
 * computeTurnDigest('run-1', 3, [{ index: 0, tool: 'update_page_metadata', arguments: { pageId: '12' } }])
 */
export function computeTurnDigest(runId: string, turn: number, calls: readonly DigestedCall[]): string {
  const canonicalCalls = calls.map((call) => ({
    index: call.index,
    tool: call.tool,
    arguments: call.arguments ?? null,
    ...(call.precondition === undefined ? {} : { precondition: call.precondition }),
  }));
  return `sha256:${sha256Hex(canonicalJson({ runId, turn, calls: canonicalCalls }))}`;
}
