import { describe, expect, it } from 'vitest';
import { InMemoryReceiptChainStore } from '../../../lambdas/adapters/memory/in-memory-receipt-chain-store.js';
import { InMemoryRunRepository } from '../../../lambdas/adapters/memory/in-memory-run-repository.js';
import {
  DECISION_RECORD_SCHEMA_VERSION,
  NO_CARD_SHOWN,
} from '../../../lambdas/core/approvals/decision-record.js';
import { CountersignError } from '../../../lambdas/core/errors.js';
import type { RunRepository } from '../../../lambdas/core/ports.js';
import { silentLogger } from '../../../lambdas/core/ports.js';
import type { ChainEntry } from '../../../lambdas/core/receipts/chain-entry.js';
import { hashOf } from '../../../lambdas/core/receipts/entry-hashes.js';
import type { ReceiptSigner } from '../../../lambdas/core/receipts/receipt-ports.js';
import { recordReceiptEntries } from '../../../lambdas/core/receipts/record-receipt-entries.js';
import { verifyReceipt } from '../../../lambdas/core/receipts/verify-receipt.js';
import { cancelRun, finishClaimedCancel } from '../../../lambdas/core/runs/cancel-run.js';
import { decideRun } from '../../../lambdas/core/runs/decide-run.js';
import { markRunExpired } from '../../../lambdas/core/runs/end-run.js';
import {
  redeliverDecisions,
  UNDELIVERED_DECISION_AGE_MS,
} from '../../../lambdas/core/runs/redeliver-decisions.js';
import { createTestSigner, readSampleReceipt } from '../../support/receipt-chains.js';
import {
  APPROVER,
  createHarness,
  digestShownTo,
  OWNER,
  SECOND_APPROVER,
  startPausedRun,
  type UseCaseHarness,
} from '../runs/use-case-harness.js';

/** Counts the card reads that reach the repository under the recorder. */
class CountingRunRepository extends InMemoryRunRepository {
  public cardReads = 0;

  public override async getCard(runId: string) {
    this.cardReads += 1;
    return super.getCard(runId);
  }
}

interface RecordedHarness {
  harness: UseCaseHarness;
  repository: CountingRunRepository;
  chain: InMemoryReceiptChainStore;
  signer: ReceiptSigner & { failNext?: boolean };
  publicKey: Awaited<ReturnType<typeof createTestSigner>>['publicKey'];
  /** The repository as a function that may not sign (cancels, expiries) sees it. */
  unsigned: RunRepository;
}

async function createRecordedHarness(
  options: Parameters<typeof createHarness>[0] = {},
): Promise<RecordedHarness> {
  const repository = new CountingRunRepository();
  const chain = new InMemoryReceiptChainStore();
  const { signer: localSigner, publicKey } = await createTestSigner();
  const signer: RecordedHarness['signer'] = {
    signingKeyId: () => localSigner.signingKeyId(),
    sign: async (message) => {
      if (signer.failNext) {
        signer.failNext = false;
        throw Object.assign(new Error('KMS is throttling'), { name: 'ThrottlingException' });
      }
      return localSigner.sign(message);
    },
  };
  const recording = { chain, policyFloor: undefined, logger: silentLogger };
  let harness: UseCaseHarness | undefined;
  const clock = { now: () => (harness as UseCaseHarness).clock.now() };
  const runs = recordReceiptEntries(repository, { ...recording, signer, clock });
  harness = createHarness({ ...options, runs });
  const unsigned = recordReceiptEntries(repository, { ...recording, clock });
  return { harness, repository, chain, signer, publicKey, unsigned };
}

async function chainOf(recorded: RecordedHarness, runId: string): Promise<ChainEntry[]> {
  return (await recorded.chain.readEntries(runId)) as ChainEntry[];
}

describe('recordReceiptEntries', () => {
  it('appends a signed decision binding the card that was judged, with no card read of its own', async () => {
    // Prepare
    const recorded = await createRecordedHarness();
    const { harness } = recorded;
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    const card = await recorded.repository.getCard(paused.runId);
    const readsBefore = recorded.repository.cardReads;

    // Act
    await decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve', digest });

    // Assess: decideRun reads the card once itself; the recorder adds none
    expect(recorded.repository.cardReads - readsBefore).toBe(1);
    const [entry, ...rest] = await chainOf(recorded, paused.runId);
    expect(rest).toEqual([]);
    const decision = await harness.runs.getDecision(paused.runId, paused.turn);
    expect(entry).toMatchObject({
      kind: 'decision',
      decision: 'approve',
      runId: paused.runId,
      turn: paused.turn,
      digest,
      decidedBy: { userId: 'alice', subject: 'alice' },
      approvers: [{ userId: 'alice', subject: 'alice' }],
      cardShownAt: card?.pausedAt,
      sealedCardHash: hashOf(card?.sealedCard ?? new Uint8Array()),
      callsHash: hashOf(decision?.cardShown ?? ''),
      policy: { fourEyes: false, requiredApprovals: 1, decisionGate: 'tool', approverGroups: [] },
      sequence: 0,
      previousHash: null,
    });
    const receipt = await readSampleReceipt(recorded.chain, paused.runId);
    expect(verifyReceipt(receipt, recorded, { runId: paused.runId })).toMatchObject({ kind: 'verified' });
  });

  it('appends each k-of-n approval, then the decision naming both approvers, in order and once', async () => {
    // Prepare
    const recorded = await createRecordedHarness({ configuration: { options: { requiredApprovals: 2 } } });
    const { harness } = recorded;
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);

    // Act
    await decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve', digest });
    await decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve', digest });
    harness.clock.advance(5_000);
    await decideRun(harness.dependencies, SECOND_APPROVER, paused.runId, { decision: 'approve', digest });
    await decideRun(harness.dependencies, SECOND_APPROVER, paused.runId, { decision: 'approve', digest });

    // Assess
    const chain = await chainOf(recorded, paused.runId);
    expect(chain.map((entry) => [entry.kind, entry.sequence])).toEqual([
      ['approval', 0],
      ['approval', 1],
      ['decision', 2],
    ]);
    expect(chain[2]).toMatchObject({
      decidedBy: { userId: 'bob' },
      approvers: [{ userId: 'alice' }, { userId: 'bob' }],
      policy: { requiredApprovals: 2 },
    });
    expect(verifyReceipt(await readSampleReceipt(recorded.chain, paused.runId), recorded)).toMatchObject({
      kind: 'verified',
      unsignedTail: 0,
    });
  });

  it('binds a rejection reason by its hash, never its text', async () => {
    // Prepare
    const recorded = await createRecordedHarness();
    const paused = await startPausedRun(recorded.harness);
    const digest = await digestShownTo(recorded.harness, APPROVER, paused.runId);

    // Act
    await decideRun(recorded.harness.dependencies, APPROVER, paused.runId, {
      decision: 'reject',
      digest,
      reason: 'Not that title.',
    });

    // Assess
    const [entry] = await chainOf(recorded, paused.runId);
    expect(entry).toMatchObject({ decision: 'reject', reasonHash: hashOf('Not that title.') });
    expect(JSON.stringify(entry)).not.toContain('Not that title');
  });

  it('delivers no decision whose entry could not be appended, nor does the probe; a repeat appends it, then delivers', async () => {
    // Prepare
    const recorded = await createRecordedHarness();
    const { harness } = recorded;
    const paused = await startPausedRun(harness);
    const request = {
      decision: 'approve' as const,
      digest: await digestShownTo(harness, APPROVER, paused.runId),
    };
    recorded.signer.failNext = true;

    // Act
    const failed = await decideRun(harness.dependencies, APPROVER, paused.runId, request).then(
      () => undefined,
      (error: unknown) => error,
    );
    const resumedAfterFailure = harness.executions.resumed.length;
    // The probe, which may not sign, finds the claim undelivered and without its entry: it holds it.
    harness.clock.advance(UNDELIVERED_DECISION_AGE_MS + 1);
    const asProbe = {
      ...harness.dependencies,
      runs: recorded.unsigned,
      receipts: { ...harness.dependencies.receipts, chain: recorded.chain },
    };
    const held = await redeliverDecisions(asProbe);
    const resumedAfterProbe = harness.executions.resumed.length;
    const repeated = await decideRun(harness.dependencies, APPROVER, paused.runId, request);
    const afterRepeat = await redeliverDecisions(asProbe);

    // Assess
    expect(failed).toMatchObject({ name: 'ThrottlingException' });
    expect(resumedAfterFailure).toBe(0);
    expect(held).toEqual({ redelivered: 0, undelivered: 1 });
    expect(resumedAfterProbe).toBe(0);
    expect(repeated).toMatchObject({ kind: 'decided', repeated: true });
    expect(afterRepeat).toEqual({ redelivered: 0, undelivered: 0 });
    expect(harness.executions.resumed).toHaveLength(1);
    expect((await chainOf(recorded, paused.runId)).map((entry) => entry.kind)).toEqual(['decision']);
  });

  it('appends the claim a faulted write had applied, read back before delivery, and once on a repeat', async () => {
    // Prepare: the claim lands, its answer is lost to a transient fault; the decision reads it back.
    const recorded = await createRecordedHarness();
    const { harness, repository } = recorded;
    const paused = await startPausedRun(harness);
    const request = {
      decision: 'approve' as const,
      digest: await digestShownTo(harness, APPROVER, paused.runId),
    };
    const claimDecision = repository.claimDecision.bind(repository);
    repository.claimDecision = async (claim) => {
      repository.claimDecision = claimDecision;
      await claimDecision(claim);
      throw new CountersignError('unavailable', 'A service is busy.');
    };
    const chainAtDelivery: string[][] = [];
    const resume = harness.executions.resume.bind(harness.executions);
    harness.executions.resume = async (...args) => {
      chainAtDelivery.push((await chainOf(recorded, paused.runId)).map((entry) => entry.kind));
      return resume(...args);
    };

    // Act
    const outcome = await decideRun(harness.dependencies, APPROVER, paused.runId, request);
    const repeated = await decideRun(harness.dependencies, APPROVER, paused.runId, request);

    // Assess
    expect(outcome).toMatchObject({ kind: 'decided', repeated: false });
    expect(repeated).toMatchObject({ kind: 'decided', repeated: true });
    expect(chainAtDelivery).toEqual([['decision']]);
    expect((await chainOf(recorded, paused.runId)).map((entry) => entry.kind)).toEqual(['decision']);
  });

  it('appends an unsigned cancel from the run record, once, where the cancelling function may not sign', async () => {
    // Prepare
    const recorded = await createRecordedHarness({ configuration: { options: { requiredApprovals: 2 } } });
    const { harness } = recorded;
    const paused = await startPausedRun(harness);
    const digest = await digestShownTo(harness, APPROVER, paused.runId);
    await decideRun(harness.dependencies, APPROVER, paused.runId, { decision: 'approve', digest });
    const asCancelling = { ...harness.dependencies, runs: recorded.unsigned };

    // Act
    await cancelRun(asCancelling, OWNER, paused.runId, { reason: 'changed my mind' });
    await cancelRun(asCancelling, OWNER, paused.runId, {});

    // Assess
    const chain = await chainOf(recorded, paused.runId);
    expect(chain.map((entry) => entry.kind)).toEqual(['approval', 'cancel']);
    expect(chain[1]).toMatchObject({
      cancelledBy: { userId: 'olivia' },
      reasonHash: hashOf('changed my mind'),
      turn: paused.turn,
    });
    expect(chain[1]).not.toHaveProperty('signature');
    expect(verifyReceipt(await readSampleReceipt(recorded.chain, paused.runId), recorded)).toMatchObject({
      kind: 'verified',
      unsignedTail: 1,
    });
  });

  it('appends an expiry when the wait runs out, and again nothing when MarkExpired is retried', async () => {
    // Prepare
    const recorded = await createRecordedHarness();
    const { harness } = recorded;
    const paused = await startPausedRun(harness);
    const asExpiring = { ...harness.dependencies, runs: recorded.unsigned };

    // Act
    await markRunExpired(asExpiring, { runId: paused.runId });
    await markRunExpired(asExpiring, { runId: paused.runId });

    // Assess
    const chain = await chainOf(recorded, paused.runId);
    expect(chain).toEqual([expect.objectContaining({ kind: 'expiry', turn: paused.turn, sequence: 0 })]);
  });

  it('appends the cancel that Prepare finishes when the cancel request failed after its claim', async () => {
    // Prepare: the cancel's claim is on record, the run still waits
    const recorded = await createRecordedHarness();
    const { harness } = recorded;
    const paused = await startPausedRun(harness);
    const claim = {
      schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
      runId: paused.runId,
      turn: paused.turn,
      decision: 'cancel',
      digest: '',
      decidedBy: 'olivia',
      decidedAt: harness.clock.now().toISOString(),
      cardShown: NO_CARD_SHOWN,
      claimId: 'claim-of-the-cancel',
      channel: 'api',
    } as const;
    await harness.runs.claimDecision(claim);

    // Act
    await finishClaimedCancel({ ...harness.dependencies, runs: recorded.unsigned }, claim);

    // Assess
    expect(await chainOf(recorded, paused.runId)).toEqual([
      expect.objectContaining({ kind: 'cancel', cancelledBy: { userId: 'olivia', subject: 'olivia' } }),
    ]);
  });
});
