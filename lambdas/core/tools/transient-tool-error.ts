/** The name a transient tool failure carries: data, so it survives a minified team tools bundle. */
export const TRANSIENT_TOOL_ERROR_NAME = 'TransientToolError';

/**
 * Thrown by a tool's `execute` when the call failed for now (its backend throttled it, timed out,
 * answered 503) and applied nothing, or the tool is `idempotent`: the workflow runs the call
 * again, with backoff, a few times (docs/runbook.md, "Retries"), before it ends "not applied".
 * Its message, like any tool exception's, reaches no log and no transcript.
 *
 * @example
 * if (response.status === 503) throw new TransientToolError('The ticket service is busy.');
 */
export class TransientToolError extends Error {
  public constructor(message = 'The tool failed temporarily.', options?: { cause?: unknown }) {
    super(message, options);
    this.name = TRANSIENT_TOOL_ERROR_NAME;
  }
}

/**
 * Whether a tool's throw is transient. By name, not `instanceof`: a team's tools module is bundled
 * apart (its own copy of this class), and a minified bundle renames classes but not this name.
 *
 * @example
 * isTransientToolError(new TransientToolError()); // true
 */
export function isTransientToolError(error: unknown): boolean {
  return error instanceof Error && error.name === TRANSIENT_TOOL_ERROR_NAME;
}
