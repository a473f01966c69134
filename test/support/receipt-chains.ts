import { createPublicKey, type KeyObject } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalReceiptSigner } from '../../lambdas/adapters/local-receipt-signer.js';
import { InMemoryReceiptChainStore } from '../../lambdas/adapters/memory/in-memory-receipt-chain-store.js';
import {
  APPROVAL_RECORD_SCHEMA_VERSION,
  DECISION_RECORD_SCHEMA_VERSION,
} from '../../lambdas/core/approvals/decision-record.js';
import type { Clock } from '../../lambdas/core/ports.js';
import { appendChainEntry, type ChainDependencies } from '../../lambdas/core/receipts/append-chain-entry.js';
import { RECEIPT_FORMAT, RECEIPT_FORMAT_VERSION } from '../../lambdas/core/receipts/chain-entry.js';
import {
  draftApprovalEntry,
  draftCancelEntry,
  draftDecisionEntry,
  draftEditEntry,
  draftExpiryEntry,
} from '../../lambdas/core/receipts/draft-chain-entries.js';
import { makeStoredCard } from './stored-run-fixtures.js';

/** A clock the tests move by hand. */
export function steppingClock(
  start = '2026-03-01T10:00:00.000Z',
): Clock & { advance(seconds: number): void } {
  let now = Date.parse(start);
  return {
    now: () => new Date(now),
    advance: (seconds) => {
      now += seconds * 1000;
    },
  };
}

/** A signer on a fresh local key in a temp folder, and that key's public half. */
export async function createTestSigner(): Promise<{
  signer: LocalReceiptSigner;
  publicKey: KeyObject;
  pem: string;
}> {
  const signer = new LocalReceiptSigner(join(mkdtempSync(join(tmpdir(), 'countersign-receipt-')), 'keys'));
  const pem = await readFile(await signer.publicKeyPath(), 'utf8');
  return { signer, publicKey: createPublicKey(pem), pem };
}

/** The chain dependencies on an in-memory store, with a stepping clock. */
export async function createChainDependencies(): Promise<
  ChainDependencies & {
    chain: InMemoryReceiptChainStore;
    signer: LocalReceiptSigner;
    publicKey: KeyObject;
    pem: string;
    clock: ReturnType<typeof steppingClock>;
  }
> {
  const { signer, publicKey, pem } = await createTestSigner();
  return { chain: new InMemoryReceiptChainStore(), signer, clock: steppingClock(), publicKey, pem };
}

const POLICY = { fourEyes: true, requiredApprovals: 2, decisionGate: 'tool' } as const;

/** What a card of two calls showed, as a decision record keeps it. */
export const TWO_CALLS_SHOWN = JSON.stringify({
  calls: [
    {
      arguments: { pageId: '12', title: 'Spring' },
      index: 0,
      preview: 'captured',
      tool: 'update_page_metadata',
    },
    {
      arguments: { pageId: '14', title: 'Sale' },
      index: 1,
      preview: 'captured',
      tool: 'update_page_metadata',
    },
  ],
});

/**
 * A run's chain as countersign records it: two k-of-n approvals of turn 2, the decision that
 * released it, then (`ending`) of turn 3: a reject, a per-call approval (call 1 refused with its
 * reason), an edit of call 0, a cancel or an expiry.
 */
export async function recordSampleChain(
  dependencies: ChainDependencies & { clock: ReturnType<typeof steppingClock> },
  runId: string,
  ending: 'reject' | 'per-call' | 'edit' | 'cancel' | 'expiry' = 'reject',
): Promise<void> {
  const card = makeStoredCard(runId, { approverGroups: ['marketing'], requiredApprovals: 2, turn: 2 });
  const digest = card.digest;
  const at = () => dependencies.clock.now().toISOString();
  for (const approver of ['ana', 'bo']) {
    dependencies.clock.advance(30);
    const approval = {
      schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
      channel: 'api',
      runId,
      turn: 2,
      digest,
      approvedBy: approver,
      approvedAt: at(),
    } as const;
    await appendChainEntry(dependencies, draftApprovalEntry(approval, card, POLICY));
  }
  const decision = {
    schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
    channel: 'api',
    runId,
    digest,
    decidedBy: 'bo',
    decidedAt: at(),
    cardShown: TWO_CALLS_SHOWN,
  } as const;
  await appendChainEntry(
    dependencies,
    draftDecisionEntry(
      { ...decision, turn: 2, decision: 'approve', approvedBy: ['ana', 'bo'] },
      card,
      POLICY,
    ),
  );
  dependencies.clock.advance(60);
  const nextCard = makeStoredCard(runId, { turn: 3, digest: 'b'.repeat(64), pausedAt: at() });
  dependencies.clock.advance(60);
  if (ending === 'reject') {
    const reject = { ...decision, turn: 3, digest: nextCard.digest, decidedBy: 'ana', decidedAt: at() };
    await appendChainEntry(
      dependencies,
      draftDecisionEntry({ ...reject, decision: 'reject', reason: 'Not this title.' }, nextCard, POLICY),
    );
  } else if (ending === 'per-call') {
    const choices = [
      { index: 0, tool: 'update_page_metadata', decision: 'approve' },
      { index: 1, tool: 'update_page_metadata', decision: 'reject', reason: 'Page 14 is frozen.' },
    ] as const;
    const partial = { ...decision, turn: 3, digest: nextCard.digest, decidedBy: 'ana', decidedAt: at() };
    await appendChainEntry(
      dependencies,
      draftDecisionEntry({ ...partial, decision: 'approve', choices: [...choices] }, nextCard, POLICY),
    );
  } else if (ending === 'edit') {
    const edits = JSON.stringify([
      { index: 0, tool: 'update_page_metadata', arguments: { pageId: '12', title: 'Spring sale' } },
    ]);
    const edit = { ...decision, turn: 3, digest: nextCard.digest, decidedBy: 'ana', decidedAt: at(), edits };
    await appendChainEntry(dependencies, draftEditEntry({ ...edit, decision: 'edit' }, nextCard, POLICY));
  } else if (ending === 'cancel') {
    await appendChainEntry(
      dependencies,
      draftCancelEntry({
        runId,
        turn: 3,
        cancelledBy: 'olivia',
        cancelledAt: at(),
        reason: 'changed my mind',
      }),
    );
  } else {
    await appendChainEntry(dependencies, draftExpiryEntry({ runId, turn: 3, expiredAt: at() }));
  }
}

/** The receipt of a run, as GET /runs/{id}/receipt writes it. */
export async function readSampleReceipt(chain: InMemoryReceiptChainStore, runId: string) {
  return {
    format: RECEIPT_FORMAT,
    formatVersion: RECEIPT_FORMAT_VERSION,
    runId,
    entries: await chain.readEntries(runId),
  };
}
