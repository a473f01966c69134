import { STORED_CARD_SCHEMA_VERSION, type StoredCard } from '../../lambdas/core/approvals/stored-card.js';
import type { RunRecord } from '../../lambdas/core/run-record.js';

/**
 * A running run as the repositories store it; the adapter tests override only what they test.
 *
 * @example
 * await runs.createRun(makeStoredRun('run-1', { status: 'waiting' }), Uint8Array.from([1]));
 */
export function makeStoredRun(runId: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId,
    owner: 'olivia',
    label: 'Tidy the home page',
    configurationId: 'default',
    taskId: 'seo',
    status: 'running',
    turn: 0,
    executionCount: 1,
    executionStartTurn: 0,
    createdAt: '2026-03-01T10:00:00.000Z',
    updatedAt: '2026-03-01T10:00:00.000Z',
    policy: { fourEyes: true, revealRejectionReason: false },
    ...overrides,
  };
}

/**
 * An open card (the current schema version) with stand-in sealed bytes; the adapter tests override only what they test.
 *
 * @example
 * await runs.putCard(makeStoredCard('run-1', { pausedAt: '2026-03-01T11:00:00.000Z' }));
 */
export function makeStoredCard(runId: string, overrides: Partial<StoredCard> = {}): StoredCard {
  return {
    schemaVersion: STORED_CARD_SCHEMA_VERSION,
    runId,
    owner: 'olivia',
    label: `Run ${runId}`,
    configurationId: 'default',
    turn: 2,
    digest: 'a'.repeat(64),
    pausedAt: '2026-03-01T10:00:00.000Z',
    expiresAt: '2026-03-08T10:00:00.000Z',
    toolNames: ['get_page', 'update_page_metadata'],
    writeToolNames: ['update_page_metadata'],
    fourEyes: false,
    revealRejectionReason: true,
    state: 'open',
    sealedCard: Uint8Array.from([1, 2, 3]),
    sealedToken: Uint8Array.from([4, 5, 6]),
    ...overrides,
  };
}
