import { nameErrorClass } from '../errors.js';
import type { RunDependencies } from '../run-dependencies.js';
import { TERMINAL_STATUSES } from '../run-record.js';
import { TEXTS } from '../texts.js';

/**
 * The flagged placeholder every surface shows for a card that cannot be opened: the run id
 * and the fixed text, nothing from the item (its plaintext is as untrusted as its blobs).
 */
export interface UnopenableCard {
  runId: string;
  unopenable: true;
  message: string;
}

type ReportDependencies = Pick<RunDependencies, 'logger'> & Partial<Pick<RunDependencies, 'metrics'>>;
type EndDependencies = Pick<RunDependencies, 'runs' | 'executions' | 'clock' | 'logger' | 'metrics'>;

/** The placeholder of one run's card. */
export function unopenableCard(runId: string): UnopenableCard {
  return { runId, unopenable: true, message: TEXTS.cardUnopenable };
}

/**
 * One refused unseal: one log line (error class and run id, nothing of the bytes) and one
 * `SealedStateRejections`, which alarms. Tampering or a copied item is the likely cause.
 */
export function reportSealedStateRejection(
  dependencies: ReportDependencies,
  runId: string,
  error: unknown,
): void {
  dependencies.logger.error('sealed state rejected', { runId, errorClass: nameErrorClass(error) });
  dependencies.metrics?.count('SealedStateRejections');
}

/**
 * Ends a run whose card cannot be opened: such a card can never be decided, so the run would
 * otherwise wait out its whole approval window. The run is marked `failed` with a readable
 * reason and leaves the inbox, then its execution is stopped by id (StopExecution): the
 * card's own task token is never used, since nothing in that card can be trusted.
 *
 * Called by the card reader's one refusal (`card-reader.ts`), on whichever surface found the
 * card. Best effort: a failure here is logged, never the request's failure.
 */
export async function endRunWithUnopenableCard(dependencies: EndDependencies, runId: string): Promise<void> {
  try {
    const record = await dependencies.runs.getRunRecord(runId);
    if (record && !TERMINAL_STATUSES.has(record.status)) {
      const now = dependencies.clock.now().toISOString();
      const outcome = await dependencies.runs.updateRun(
        runId,
        { status: 'failed', failureReason: TEXTS.cardUnopenableFailure, endedAt: now, updatedAt: now },
        { expectStatus: ['running', 'waiting'], removeFields: ['pendingToolNames'] },
      );
      await dependencies.runs.closeCard(runId, 'failed');
      if (outcome.kind === 'written') {
        dependencies.metrics.count('RunsFailed');
        dependencies.logger.warn('run failed', { runId, error: 'sealed-state-rejected' });
        // By the id Prepare recorded; a run with none has no execution to stop yet.
        if (record.executionId) {
          await dependencies.executions.stopExecution({
            runId,
            executionId: record.executionId,
            because: 'sealed-state-rejected',
          });
        }
      }
      return;
    }
    await dependencies.runs.closeCard(runId, 'failed');
  } catch (error) {
    dependencies.logger.error('run with an unopenable card could not be ended', {
      runId,
      errorClass: nameErrorClass(error),
    });
  }
}
