import { type ChainEntry, chainEntrySchema } from '../../core/receipts/chain-entry.js';
import type { AppendOutcome, ReceiptChainStore } from '../../core/receipts/receipt-ports.js';

/**
 * The receipt chains in memory, with the DynamoDB store's semantics (the adapter contract runs on
 * both): an entry is kept as JSON text and read back as stored, and an append is refused when its
 * (run, sequence) is taken.
 *
 * @example
 * const chain = new InMemoryReceiptChainStore();
 * await chain.appendEntry(entry); // { kind: 'appended' }
 */
export class InMemoryReceiptChainStore implements ReceiptChainStore {
  private readonly chains = new Map<string, string[]>();

  public async readEntries(runId: string): Promise<unknown[]> {
    return (this.chains.get(runId) ?? []).map((text) => JSON.parse(text) as unknown);
  }

  /** Replaces a stored entry's text (tests: what someone with write access to the table could do). */
  public overwrite(runId: string, sequence: number, entry: unknown): void {
    const chain = this.chains.get(runId) ?? [];
    chain[sequence] = JSON.stringify(entry);
    this.chains.set(runId, chain);
  }

  public async appendEntry(entry: ChainEntry): Promise<AppendOutcome> {
    const parsed = chainEntrySchema.parse(entry);
    const chain = this.chains.get(parsed.runId) ?? [];
    if (parsed.sequence < chain.length) return { kind: 'sequence-taken' };
    // DynamoDB keys positions, not an array: a gap is as writable there; the appender never leaves one.
    if (parsed.sequence > chain.length) throw new Error('A chain entry would leave a gap.');
    this.chains.set(parsed.runId, [...chain, JSON.stringify(parsed)]);
    return { kind: 'appended' };
  }

  /** Every run with a chain (tests: what was recorded). */
  public runIds(): string[] {
    return [...this.chains.keys()];
  }
}
