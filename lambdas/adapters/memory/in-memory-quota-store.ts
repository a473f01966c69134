import type {
  LeaseOutcome,
  QuotaStore,
  StartedRun,
  TakenLease,
  WindowOutcome,
} from '../../core/quotas/quota-store.js';

/**
 * `QuotaStore` in memory, for the use-case tests: the same answers as DynamoDB
 * (`DynamoQuotaStore`), held to the same contract suite (test/adapters/quota-store-contract.test.ts).
 * One process only: deployed and locally, the DynamoDB store is what Lambdas share.
 */
export class InMemoryQuotaStore implements QuotaStore {
  private readonly windows = new Map<string, number>();
  private readonly leases = new Map<string, Map<number, { leaseId: string; endsAtSeconds: number }>>();
  private readonly started = new Map<string, Map<string, StartedRun>>();

  public async countInWindow(request: Parameters<QuotaStore['countInWindow']>[0]): Promise<WindowOutcome> {
    const key = JSON.stringify([request.principalId, request.counter, request.windowStartSeconds]);
    const count = this.windows.get(key) ?? 0;
    if (count >= request.limit) return { kind: 'over-limit' };
    this.windows.set(key, count + 1);
    return { kind: 'counted' };
  }

  public async takeLease(request: Parameters<QuotaStore['takeLease']>[0]): Promise<LeaseOutcome> {
    const slots = this.leases.get(request.principalId) ?? new Map();
    this.leases.set(request.principalId, slots);
    for (let slot = 0; slot < request.limit; slot += 1) {
      const held = slots.get(slot);
      if (held === undefined || held.endsAtSeconds <= request.nowSeconds) {
        slots.set(slot, { leaseId: request.leaseId, endsAtSeconds: request.endsAtSeconds });
        return { kind: 'taken', lease: { principalId: request.principalId, slot, leaseId: request.leaseId } };
      }
    }
    const ends = [...slots.entries()]
      .filter(([slot]) => slot < request.limit)
      .map(([, held]) => held.endsAtSeconds);
    return { kind: 'over-limit', freeAtSeconds: Math.min(...ends) };
  }

  public async releaseLease(lease: TakenLease): Promise<void> {
    const slots = this.leases.get(lease.principalId);
    if (slots?.get(lease.slot)?.leaseId === lease.leaseId) slots.delete(lease.slot);
  }

  public async recordStartedRun(principalId: string, run: StartedRun): Promise<void> {
    const runs = this.started.get(principalId) ?? new Map();
    runs.set(run.runId, { ...run });
    this.started.set(principalId, runs);
  }

  public async listStartedRuns(principalId: string): Promise<StartedRun[]> {
    return [...(this.started.get(principalId)?.values() ?? [])]
      .map((run) => ({ ...run }))
      .sort((left, right) => left.runId.localeCompare(right.runId));
  }

  public async forgetStartedRuns(principalId: string, runIds: readonly string[]): Promise<void> {
    for (const runId of runIds) this.started.get(principalId)?.delete(runId);
  }
}
