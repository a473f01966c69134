import { type RecordingDependencies, withReceiptRecording } from '../../core/receipts/receipt-recording.js';
import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { createRunsRoutes, type RunsRouteDependencies } from '../routes/runs-routes.js';

/**
 * The `runs` API Lambda: POST /runs, GET /runs/{id}, POST /runs/{id}/cancel (a cancel appends to
 * the run's receipt chain, unsigned) and GET /runs/{id}/receipt.
 */
export function createRunsApi(
  dependencies: RunsRouteDependencies & RecordingDependencies & HttpApiDependencies,
): HttpLambdaHandler {
  const recording = withReceiptRecording(dependencies, 'append');
  return createHttpApi('api-runs', createRunsRoutes(recording), recording);
}
