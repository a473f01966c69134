import { type RecordingDependencies, withReceiptRecording } from '../../core/receipts/receipt-recording.js';
import type { DecisionDependencies } from '../../core/run-dependencies.js';
import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createDecisionRoutes } from '../routes/decision-routes.js';

/**
 * The `decision` API Lambda: POST /runs/{id}/decision, the only route that resumes a run, and the
 * only function that signs receipt entries (each approval and decision it records).
 */
export function createDecisionApi(
  dependencies: DecisionDependencies & RecordingDependencies & HttpApiDependencies,
): HttpLambdaHandler {
  const recording = withReceiptRecording(dependencies, 'sign');
  return createHttpApi('api-decision', createDecisionRoutes(recording), recording);
}
