import type { RunRecord, RunStatus } from '../run-record.js';

/** Where a run stands, as its owner and admins see it (GET /runs/{id}, the event stream's `state`). */
export interface RunStatusView {
  status: RunStatus;
  turn: number;
  updatedAt: string;
  endedAt?: string;
  failureReason?: string;
  /** Present once the run was cancelled: who, and why when they said. */
  cancellation?: { by: string; reason?: string };
}

/** The record's status fields, leaving out those the run has not reached (no end, no cancellation). */
export function buildRunStatusView(record: RunRecord): RunStatusView {
  return {
    status: record.status,
    turn: record.turn,
    updatedAt: record.updatedAt,
    ...(record.endedAt ? { endedAt: record.endedAt } : {}),
    ...(record.failureReason ? { failureReason: record.failureReason } : {}),
    ...(record.cancelledBy === undefined
      ? {}
      : {
          cancellation: {
            by: record.cancelledBy,
            ...(record.cancellationReason ? { reason: record.cancellationReason } : {}),
          },
        }),
  };
}
