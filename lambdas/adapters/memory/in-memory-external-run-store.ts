import {
  type ClientKeyClaim,
  type ClientKeyOutcome,
  clientKeyClaimSchema,
  type ExecutionReport,
  type ExternalRunStore,
  executionReportSchema,
  type ReportOutcome,
} from '../../core/external-runs/external-run-store.js';

/**
 * `ExternalRunStore` in memory, for the use-case tests: the same first-writer-wins claims as the
 * DynamoDB adapter, under the same contract tests (`test/adapters/external-run-store-contract.test.ts`).
 *
 * @example
 * const externalRuns = new InMemoryExternalRunStore();
 */
export class InMemoryExternalRunStore implements ExternalRunStore {
  private readonly clientKeys = new Map<string, ClientKeyClaim>();
  private readonly reports = new Map<string, ExecutionReport>();

  public async claimClientKey(claim: ClientKeyClaim): Promise<ClientKeyOutcome> {
    const parsed = clientKeyClaimSchema.parse(claim);
    const key = JSON.stringify([parsed.owner, parsed.clientKey]);
    const existing = this.clientKeys.get(key);
    if (existing) return { kind: 'exists', existing: structuredClone(existing) };
    this.clientKeys.set(key, structuredClone(parsed));
    return { kind: 'claimed' };
  }

  public async getClientKey(owner: string, clientKey: string): Promise<ClientKeyClaim | undefined> {
    const found = this.clientKeys.get(JSON.stringify([owner, clientKey]));
    return found && structuredClone(found);
  }

  public async recordExecution(report: ExecutionReport): Promise<ReportOutcome> {
    const parsed = executionReportSchema.parse(report);
    const key = JSON.stringify([parsed.runId, parsed.index]);
    const existing = this.reports.get(key);
    if (existing) return { kind: 'exists', existing: structuredClone(existing) };
    this.reports.set(key, structuredClone(parsed));
    return { kind: 'recorded' };
  }

  public async listExecutions(runId: string): Promise<ExecutionReport[]> {
    return [...this.reports.values()]
      .filter((report) => report.runId === runId)
      .sort((left, right) => left.index - right.index)
      .map((report) => structuredClone(report));
  }
}
