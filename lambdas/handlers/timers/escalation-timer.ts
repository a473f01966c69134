import * as z from 'zod/mini';
import { runInInvocationScope } from '../../adapters/invocation-scope.js';
import { nameErrorClass } from '../../core/errors.js';
import {
  type EscalationDependencies,
  type EscalationTimerOutcome,
  escalateCardOnTimer,
  escalationTimerInputSchema,
} from '../../core/runs/escalate-card.js';

/**
 * The handler an escalation timer invokes (EventBridge Scheduler deployed, the local timers
 * locally), with the identifiers the timer carries. A malformed payload is logged and dropped
 * (it can never become valid); any other failure is thrown, so Scheduler retries the delivery.
 *
 * @example
 * const escalate = createEscalationTimerHandler(dependencies);
 * await escalate({ runId, turn: 2, digest, step: 0 });
 */
export function createEscalationTimerHandler(
  dependencies: EscalationDependencies,
): (event: unknown) => Promise<EscalationTimerOutcome | { kind: 'malformed' }> {
  return async (event) => {
    const input = z.safeParse(escalationTimerInputSchema, event);
    const runId = input.success ? input.data.runId : undefined;
    return runInInvocationScope(
      {
        correlationId: runId ?? 'escalation',
        operation: 'EscalateCard',
        ...(runId === undefined ? {} : { runId }),
        ...(input.success ? { turn: input.data.turn } : {}),
      },
      async () => {
        if (!input.success) {
          dependencies.logger.warn('escalation timer dropped: malformed input');
          return { kind: 'malformed' as const };
        }
        try {
          return await escalateCardOnTimer(dependencies, input.data);
        } catch (error) {
          dependencies.logger.warn('escalation timer failed', {
            runId,
            errorClass: nameErrorClass(error),
          });
          throw error;
        }
      },
    );
  };
}
