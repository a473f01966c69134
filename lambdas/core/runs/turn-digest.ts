import { canonicalJson, sha256Hex } from '../canonical-json.js';

export interface DigestedCall {
  index: number;
  tool: string;
  arguments: unknown;
}

/**
 * The turn digest: sha256 over the canonical JSON of the run id, the turn and its pending
 * calls. A decision names it, so a stale tab cannot approve a turn nobody looked at. It
 * binds the agent's proposal, never the target resource (seed 000: the preview is a
 * snapshot, not a precondition).
 *
 * @example
 * computeTurnDigest('run-1', 3, [{ index: 0, tool: 'update_page_metadata', arguments: { pageId: '12' } }])
 */
export function computeTurnDigest(runId: string, turn: number, calls: readonly DigestedCall[]): string {
  const canonicalCalls = calls.map((call) => ({
    index: call.index,
    tool: call.tool,
    arguments: call.arguments ?? null,
  }));
  return `sha256:${sha256Hex(canonicalJson({ runId, turn, calls: canonicalCalls }))}`;
}
