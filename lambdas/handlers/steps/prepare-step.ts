import * as z from 'zod/mini';
import { STATE_NAMES } from '../../contract/state-names.js';
import { type RecordingDependencies, withReceiptRecording } from '../../core/receipts/receipt-recording.js';
import { type PrepareRunDependencies, prepareRun } from '../../core/runs/prepare-run.js';
import { defineStep, runIdSchema, type StepDependencies } from './define-step.js';

/**
 * The `Prepare` step: the run store, and the receipt chain for the cancel it finishes when a
 * cancel request claimed the waiting turn and failed before it ended the run.
 */
export function createPrepareStep(
  dependencies: StepDependencies<PrepareRunDependencies> & RecordingDependencies,
) {
  const recording = withReceiptRecording(dependencies, 'append');
  return defineStep(
    STATE_NAMES.prepare,
    dependencies.logger,
    z.object({ runId: runIdSchema, executionId: z.string().check(z.minLength(1)) }),
    (input) => prepareRun(recording, input),
  );
}
