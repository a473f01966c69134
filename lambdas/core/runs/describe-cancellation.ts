import type { RunRecord } from './run-record.js';

/** Who cancelled the run and why, for the run's owner and admins (GET /runs/{id}, the event stream). */
export function describeCancellation(record: Pick<RunRecord, 'cancelledBy' | 'cancellationReason'>): {
  cancellation?: { by: string; reason?: string };
} {
  if (record.cancelledBy === undefined) return {};
  return {
    cancellation: {
      by: record.cancelledBy,
      ...(record.cancellationReason ? { reason: record.cancellationReason } : {}),
    },
  };
}
