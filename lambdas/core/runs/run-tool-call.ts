import { classifyCallRunnability } from '../approvals/call-runnability.js';
import type { RunStateCall } from '../approvals/pending-call.js';
import type { ResolvedCall } from '../approvals/resolve-calls.js';
import { isCountersignError, nameErrorClass } from '../errors.js';
import type { ToolStepDependencies } from '../run-dependencies.js';
import { TEXTS } from '../texts.js';
import type { ToolExecutionContext } from '../tools/tool.js';
import { isTransientToolError } from '../tools/transient-tool-error.js';
import type { CallResult } from './call-record.js';

/**
 * One run of a tool call: its result, or a transient failure (the tool's `TransientToolError`,
 * or a service it reached through countersign's own adapters throttled or failing) that the
 * caller may try again.
 */
export type ToolCallAttempt = { kind: 'ran'; result: CallResult } | { kind: 'transient'; errorClass: string };

/**
 * Runs one call (resolved once: its tool and parsed arguments) under the run's acting user, when
 * its arguments and its tool allow it (the card's "will run" and execution follow the same
 * rule). A tool's exception text stays out of the transcript and the logs: it can carry
 * credentials; only its class is kept.
 *
 * @example
 * const attempt = await runToolCall(dependencies, resolved, { actingUser, runId, pages, idempotencyKey });
 */
export async function runToolCall(
  dependencies: Pick<ToolStepDependencies, 'logger' | 'metrics'>,
  resolved: ResolvedCall<RunStateCall>,
  context: ToolExecutionContext,
): Promise<ToolCallAttempt> {
  const { call } = resolved;
  const runnability = classifyCallRunnability(resolved);
  if (runnability.kind === 'refused-arguments') {
    return ran({ content: TEXTS.toolInvalidArguments(call.tool, runnability.problem), isError: true });
  }
  if (runnability.kind !== 'runs') return ran({ content: TEXTS.toolUnavailable(call.tool), isError: true });
  const { tool, value } = runnability;
  try {
    const outcome = await tool.execute(value, context);
    dependencies.metrics.count('ToolCalls', 1, {
      tool: call.tool,
      outcome: outcome.recordChanged ? 'record-changed' : outcome.isError ? 'refused' : 'ok',
    });
    return ran({
      content: outcome.content,
      isError: outcome.isError,
      ...(outcome.recordChanged === true ? { recordChanged: true } : {}),
    });
  } catch (error) {
    const errorClass = nameErrorClass(error);
    const transient = isTransientToolError(error) || isCountersignError(error, 'unavailable');
    dependencies.logger.warn('tool failed', { runId: context.runId, tool: call.tool, errorClass, transient });
    dependencies.metrics.count('ToolCalls', 1, {
      tool: call.tool,
      outcome: transient ? 'transient' : 'failed',
    });
    if (transient) return { kind: 'transient', errorClass };
    return ran({ content: TEXTS.toolFailed(call.tool, errorClass), isError: true });
  }
}

function ran(result: CallResult): ToolCallAttempt {
  return { kind: 'ran', result };
}
