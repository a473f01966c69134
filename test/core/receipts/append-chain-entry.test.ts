import { describe, expect, it } from 'vitest';
import { InMemoryReceiptChainStore } from '../../../lambdas/adapters/memory/in-memory-receipt-chain-store.js';
import { appendChainEntry } from '../../../lambdas/core/receipts/append-chain-entry.js';
import type { ChainEntry } from '../../../lambdas/core/receipts/chain-entry.js';
import { draftCancelEntry, draftExpiryEntry } from '../../../lambdas/core/receipts/draft-chain-entries.js';
import type { AppendOutcome } from '../../../lambdas/core/receipts/receipt-ports.js';
import { verifyReceipt } from '../../../lambdas/core/receipts/verify-receipt.js';
import {
  createChainDependencies,
  readSampleReceipt,
  recordSampleChain,
} from '../../support/receipt-chains.js';

/** Counts what the appender asks of its store and its signer. */
class CountingChainStore extends InMemoryReceiptChainStore {
  public reads = 0;
  public appends = 0;

  public override async readEntries(runId: string): Promise<unknown[]> {
    this.reads += 1;
    return super.readEntries(runId);
  }

  public override async appendEntry(entry: ChainEntry): Promise<AppendOutcome> {
    this.appends += 1;
    return super.appendEntry(entry);
  }
}

/** The cancel of run-1 the retry and race cases append. */
const cancel = draftCancelEntry({
  runId: 'run-1',
  turn: 1,
  cancelledBy: 'olivia',
  cancelledAt: '2026-03-01T10:00:00.000Z',
});

describe('appendChainEntry', () => {
  it('appends a signed entry with one chain read, one signature and one conditional put', async () => {
    // Prepare
    const dependencies = await createChainDependencies();
    const chain = new CountingChainStore();
    let signatures = 0;
    const signer = {
      signingKeyId: () => dependencies.signer.signingKeyId(),
      sign: (message: Uint8Array) => {
        signatures += 1;
        return dependencies.signer.sign(message);
      },
    };
    await recordSampleChain({ ...dependencies, chain, signer }, 'run-1', 'reject');

    // Act: four signed entries
    const counts = { reads: chain.reads, appends: chain.appends, signatures };

    // Assess
    expect(counts).toEqual({ reads: 4, appends: 4, signatures: 4 });
    expect(verifyReceipt(await readSampleReceipt(chain, 'run-1'), dependencies)).toMatchObject({
      kind: 'verified',
    });
  });

  it('appends an entry for a record once, however often a retry asks', async () => {
    // Prepare
    const dependencies = await createChainDependencies();

    // Act
    const first = await appendChainEntry(dependencies, cancel);
    const again = await appendChainEntry(dependencies, cancel);

    // Assess
    expect(first.kind).toBe('appended');
    expect(again).toEqual({ kind: 'already-recorded', entry: first.entry });
    expect(await dependencies.chain.readEntries('run-1')).toHaveLength(1);
  });

  it('links racing appends one after the other, and records racing retries of one record once', async () => {
    // Prepare
    const dependencies = await createChainDependencies();
    const expiry = draftExpiryEntry({ runId: 'run-1', turn: 1, expiredAt: '2026-03-01T10:00:01.000Z' });

    // Act
    const outcomes = await Promise.all([
      appendChainEntry(dependencies, cancel),
      appendChainEntry(dependencies, expiry),
      appendChainEntry(dependencies, cancel),
      appendChainEntry(dependencies, expiry),
    ]);

    // Assess
    expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual([
      'already-recorded',
      'already-recorded',
      'appended',
      'appended',
    ]);
    const receipt = await readSampleReceipt(dependencies.chain, 'run-1');
    expect(receipt.entries.map((entry) => (entry as ChainEntry).kind).sort()).toEqual(['cancel', 'expiry']);
    expect(verifyReceipt(receipt, dependencies)).toMatchObject({ kind: 'verified', unsignedTail: 2 });
  });

  it('gives up with a conflict when the position is taken every time it reads the chain', async () => {
    // Prepare
    const dependencies = await createChainDependencies();
    const chain = new (class extends InMemoryReceiptChainStore {
      public override async appendEntry(): Promise<AppendOutcome> {
        return { kind: 'sequence-taken' };
      }
    })();

    // Act
    const appending = appendChainEntry(
      { ...dependencies, chain },
      draftExpiryEntry({ runId: 'run-1', turn: 1, expiredAt: '2026-03-01T10:00:00.000Z' }),
    );

    // Assess
    await expect(appending).rejects.toMatchObject({ code: 'conflict' });
  });

  it('appends nothing after a stored entry no version of countersign wrote', async () => {
    // Prepare
    const dependencies = await createChainDependencies();
    await recordSampleChain(dependencies, 'run-1', 'reject');
    const [first] = await dependencies.chain.readEntries('run-1');
    dependencies.chain.overwrite('run-1', 0, { ...(first as object), extra: true });

    // Act
    const appending = appendChainEntry(
      dependencies,
      draftExpiryEntry({ runId: 'run-1', turn: 3, expiredAt: '2026-03-01T12:00:00.000Z' }),
    );

    // Assess
    await expect(appending).rejects.toMatchObject({ code: 'sealed-state-rejected' });
    expect(await dependencies.chain.readEntries('run-1')).toHaveLength(4);
  });
});
