/** A counted event in a fixed window: counted, or refused because the window's count reached the limit. */
export type WindowOutcome = { kind: 'counted' } | { kind: 'over-limit' };

/** A lease on one of a principal's `limit` slots: taken, or refused with when the first slot frees. */
export type LeaseOutcome =
  | { kind: 'taken'; lease: TakenLease }
  | { kind: 'over-limit'; freeAtSeconds: number };

/** What giving a lease back needs: whose, which slot, and which holder (a slot retaken since is not freed). */
export interface TakenLease {
  readonly principalId: string;
  readonly slot: number;
  readonly leaseId: string;
}

/** A run a principal started, as the waiting-runs quota remembers it. */
export interface StartedRun {
  readonly runId: string;
  readonly configurationId: string;
}

/**
 * Port: the counters behind the per-principal quotas, shared by every Lambda instance
 * (DynamoDB deployed, dynalite locally, in memory in unit tests; one contract suite). Counts
 * are conditional writes, so concurrent requests never pass a limit together; state expires on
 * its own (a window key per minute, a lease with an end, TTL on everything), so a crashed
 * request or stream heals without anyone cleaning up.
 */
export interface QuotaStore {
  /**
   * Counts one event of `counter` in the principal's window starting at `windowStartSeconds`
   * if the count stays within `limit`.
   */
  countInWindow(request: {
    principalId: string;
    counter: string;
    windowStartSeconds: number;
    windowSeconds: number;
    limit: number;
  }): Promise<WindowOutcome>;
  /**
   * Takes one of the principal's `limit` slots until `endsAtSeconds`: a slot is free when no
   * lease holds it or its lease has ended by `nowSeconds`.
   */
  takeLease(request: {
    principalId: string;
    leaseId: string;
    limit: number;
    nowSeconds: number;
    endsAtSeconds: number;
  }): Promise<LeaseOutcome>;
  /** Frees the slot if `lease` still holds it. */
  releaseLease(lease: TakenLease): Promise<void>;
  /** Remembers a run the principal started, until `removeAfterSeconds` at the latest. */
  recordStartedRun(principalId: string, run: StartedRun, removeAfterSeconds: number): Promise<void>;
  /** The runs the principal started that were not forgotten yet (ended ones included until pruned). */
  listStartedRuns(principalId: string): Promise<StartedRun[]>;
  /** Forgets runs that ended, so they no longer cost a check. */
  forgetStartedRuns(principalId: string, runIds: readonly string[]): Promise<void>;
}
