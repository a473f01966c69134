import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendChainEntry, type EntryDraft } from '../../../lambdas/core/receipts/append-chain-entry.js';
import { verifyReceipt } from '../../../lambdas/core/receipts/verify-receipt.js';
import {
  createChainDependencies,
  readSampleReceipt,
  recordSampleChain,
} from '../../support/receipt-chains.js';
import { type Json, leafPaths, relink, tamper } from '../../support/receipt-tampering.js';

type Receipt = Awaited<ReturnType<typeof readSampleReceipt>>;
describe('verifyReceipt', () => {
  let dependencies: Awaited<ReturnType<typeof createChainDependencies>>;
  let receipt: Receipt;
  let otherRun: Receipt;

  beforeAll(async () => {
    dependencies = await createChainDependencies();
    await recordSampleChain(dependencies, 'run-a', 'reject');
    await recordSampleChain(dependencies, 'run-b', 'cancel');
    receipt = await readSampleReceipt(dependencies.chain, 'run-a');
    otherRun = await readSampleReceipt(dependencies.chain, 'run-b');
  });

  const verify = (candidate: unknown, runId?: string) =>
    verifyReceipt(candidate, { publicKey: dependencies.publicKey }, runId === undefined ? {} : { runId });
  const withEntries = (entries: unknown[]): Receipt => ({ ...receipt, entries });

  it('verifies a run’s chain and says what each entry records', () => {
    // Act
    const verification = verify(receipt, 'run-a');

    // Assess
    expect(verification).toEqual({
      kind: 'verified',
      runId: 'run-a',
      unsignedTail: 0,
      entries: [
        expect.objectContaining({ sequence: 0, kind: 'approval', turn: 2, by: 'ana', signed: true }),
        expect.objectContaining({ sequence: 1, kind: 'approval', turn: 2, by: 'bo', signed: true }),
        expect.objectContaining({
          sequence: 2,
          kind: 'decision',
          decision: 'approve',
          approvers: ['ana', 'bo'],
        }),
        expect.objectContaining({ sequence: 3, kind: 'decision', decision: 'reject', by: 'ana', turn: 3 }),
      ],
    });
  });

  it('counts the unsigned entries after the last signature (a cancel is chained, not signed)', () => {
    // Act
    const verification = verify(otherRun);

    // Assess
    expect(verification).toMatchObject({ kind: 'verified', unsignedTail: 1 });
    expect(verification.kind === 'verified' && verification.entries.at(-1)).toMatchObject({
      kind: 'cancel',
      by: 'olivia',
      signed: false,
    });
  });

  it('detects a change to any field of any signed entry, at that entry, by its signature or its links', () => {
    // Prepare
    const entries = receipt.entries as Json[];
    const cases = entries.flatMap((entry, position) =>
      leafPaths(entry).map((path) => ({ position, path, ...tamper(entry, path) })),
    );

    // Act
    const outcomes = cases.map(({ position, path, entry, keepsFormat }) => ({
      field: `${position}.${path.join('.')}`,
      keepsFormat,
      verification: verify(withEntries(entries.map((each, index) => (index === position ? entry : each)))),
      position,
    }));

    // Assess: every field of every entry, and most changes keep the format, so the crypto catches them
    expect(cases.length).toBeGreaterThan(80);
    expect(outcomes.filter((outcome) => outcome.keepsFormat).length).toBeGreaterThan(cases.length * 0.8);
    for (const { field, keepsFormat, verification, position } of outcomes) {
      expect(verification, field).toMatchObject({ kind: 'failed', entry: position });
      if (keepsFormat && verification.kind === 'failed') {
        expect(['signature', 'chain', 'sequence', 'run', 'policy', 'calls'], field).toContain(
          verification.check,
        );
      }
    }
  });

  it('detects a change to an unsigned entry at the next entry, which names its hash', async () => {
    // Prepare: an expiry followed by a signed entry (the format allows it; the appender links it)
    await recordSampleChain(dependencies, 'run-c', 'expiry');
    const decision = (await dependencies.chain.readEntries('run-c'))[2] as Record<string, Json>;
    const {
      signature: _signature,
      signer: _signer,
      sequence: _sequence,
      previousHash: _previous,
      ...draft
    } = decision;
    await appendChainEntry(dependencies, { ...(draft as unknown as EntryDraft), turn: 4 });
    const chained = await readSampleReceipt(dependencies.chain, 'run-c');
    const expiry = chained.entries[3] as Json;
    const tampered = leafPaths(expiry).map((path) => tamper(expiry, path));

    // Act
    const outcomes = tampered.map(({ entry }) =>
      verify({ ...chained, entries: chained.entries.map((each, index) => (index === 3 ? entry : each)) }),
    );

    // Assess
    expect(verify(chained)).toMatchObject({ kind: 'verified', unsignedTail: 0 });
    expect(tampered.length).toBeGreaterThanOrEqual(8);
    for (const [index, outcome] of outcomes.entries()) {
      const { keepsFormat } = tampered[index] ?? { keepsFormat: false };
      expect(outcome).toMatchObject({ kind: 'failed' });
      if (keepsFormat && outcome.kind === 'failed') expect(outcome.entry).toBeGreaterThanOrEqual(3);
    }
  });

  it('detects reordered entries, also when their sequence numbers are rewritten to match', () => {
    // Prepare
    const [first, second, ...rest] = receipt.entries as Array<Record<string, Json>>;
    const swapped = [second, first, ...rest];
    const renumbered = swapped.map((entry, sequence) => ({ ...entry, sequence }));
    const relinked = relink(renumbered);

    // Act
    const outcomes = [swapped, renumbered, relinked].map((entries) => verify(withEntries(entries)));

    // Assess
    expect(outcomes[0]).toMatchObject({ kind: 'failed', check: 'sequence', entry: 0 });
    expect(outcomes[1]).toMatchObject({ kind: 'failed', check: 'chain', entry: 0 });
    expect(outcomes[2]).toMatchObject({ kind: 'failed', check: 'signature', entry: 0 });
  });

  it('detects a dropped entry at the start or in the middle, also when the rest is renumbered', () => {
    // Prepare
    const entries = receipt.entries as Array<Record<string, Json>>;
    const withoutFirst = entries.slice(1);
    const withoutMiddle = entries.filter((_entry, index) => index !== 1);
    const renumbered = withoutMiddle.map((entry, sequence) => ({ ...entry, sequence }));
    const relinked = relink(renumbered);

    // Act
    const outcomes = [withoutFirst, withoutMiddle, renumbered, relinked].map((chain) =>
      verify(withEntries(chain)),
    );

    // Assess
    expect(outcomes[0]).toMatchObject({ kind: 'failed', check: 'sequence', entry: 0 });
    expect(outcomes[1]).toMatchObject({ kind: 'failed', check: 'sequence', entry: 1 });
    expect(outcomes[2]).toMatchObject({ kind: 'failed', check: 'chain', entry: 1 });
    expect(outcomes[3]).toMatchObject({ kind: 'failed', check: 'signature', entry: 1 });
  });

  it('verifies a receipt cut after a signed entry only as the shorter chain it then is', () => {
    // Act: what a receipt proves ends at its last entry (docs/receipts.md)
    const verification = verify(withEntries(receipt.entries.slice(0, -1)));

    // Assess
    expect(verification).toMatchObject({ kind: 'verified', unsignedTail: 0 });
    expect(verification.kind === 'verified' && verification.entries.map((entry) => entry.turn)).toEqual([
      2, 2, 2,
    ]);
  });

  it('detects a receipt of another run, renamed, or with an entry of another run spliced in', () => {
    // Prepare
    const renamed = { ...otherRun, runId: 'run-a' };
    const foreign = { ...(otherRun.entries[2] as Record<string, Json>) };
    const spliced = [...(receipt.entries.slice(0, 2) as Json[]), foreign];
    const disguised = [...(receipt.entries.slice(0, 2) as Json[]), { ...foreign, runId: 'run-a' }];

    // Act
    const outcomes = [
      verify(otherRun, 'run-a'),
      verify(renamed, 'run-a'),
      verify(withEntries(spliced)),
      verify(withEntries(disguised)),
    ];

    // Assess
    expect(outcomes[0]).toMatchObject({
      kind: 'failed',
      check: 'run',
      message: expect.stringContaining('run-b'),
    });
    expect(outcomes[1]).toMatchObject({ kind: 'failed', check: 'run', entry: 0 });
    expect(outcomes[2]).toMatchObject({ kind: 'failed', check: 'run', entry: 2 });
    expect(outcomes[3]).toMatchObject({
      kind: 'failed',
      check: expect.stringMatching(/^(chain|signature)$/),
      entry: 2,
    });
  });

  it('refuses another P-256 key, a key of another kind, and signatures by another key id', () => {
    // Prepare
    const stranger = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey;
    const edwards = generateKeyPairSync('ed25519').publicKey;

    // Act
    const outcomes = [
      verifyReceipt(receipt, { publicKey: stranger }),
      verifyReceipt(receipt, { publicKey: edwards }),
      verifyReceipt(receipt, { publicKey: dependencies.publicKey, keyId: 'arn:aws:kms:eu-west-1:1:key/k' }),
    ];

    // Assess
    expect(outcomes[0]).toMatchObject({ kind: 'failed', check: 'signature', entry: 0 });
    expect(outcomes[1]).toMatchObject({ kind: 'failed', check: 'key' });
    expect(outcomes[2]).toMatchObject({ kind: 'failed', check: 'key', entry: 0 });
  });

  it('refuses what is not a receipt, an added field, a signature on an unsigned entry, and a missing one', () => {
    // Prepare
    const [first, ...rest] = receipt.entries as Array<Record<string, Json>>;
    const { signature: _dropped, ...unsigned } = first as Record<string, Json>;
    const cancel = otherRun.entries.at(-1) as Record<string, Json>;

    // Act
    const outcomes = [
      verify({ entries: [] }),
      verify({ ...receipt, note: 'trust me' }),
      verify(withEntries([{ ...first, approvedBy: 'mallory' }, ...rest])),
      verify({
        ...otherRun,
        entries: [...otherRun.entries.slice(0, -1), { ...cancel, signature: first?.signature }],
      }),
      verify(withEntries([unsigned, ...rest])),
      verify(withEntries([JSON.parse('{"__proto__":{"admin":true}}'), ...rest])),
    ];

    // Assess
    expect(outcomes.map((outcome) => outcome.kind === 'failed' && outcome.check)).toEqual([
      'format',
      'format',
      'format',
      'format',
      'format',
      'format',
    ]);
    expect(outcomes[2]).toMatchObject({ entry: 0, message: expect.stringContaining('approvedBy') });
  });

  it('still verifies a version 1 entry signed when the format was written (test/fixtures/chain-entry/)', async () => {
    // Prepare
    const fixture = (name: string) =>
      readFile(new URL(`../../fixtures/chain-entry/${name}`, import.meta.url), 'utf8');
    const publicKey = createPublicKey(await fixture('public-key.pem'));
    const entry = JSON.parse(await fixture('v1-approval.json')) as Record<string, Json>;
    const receiptOfOne = {
      format: 'countersign-receipt',
      formatVersion: 1,
      runId: 'run-fixture',
      entries: [entry],
    };

    // Act
    const verification = verifyReceipt(receiptOfOne, { publicKey });
    const tampered = verifyReceipt(
      { ...receiptOfOne, entries: [{ ...entry, approvedAt: '2026-03-01T09:59:00.000Z' }] },
      { publicKey },
    );

    // Assess
    expect(verification).toMatchObject({ kind: 'verified', entries: [{ kind: 'approval', by: 'ana' }] });
    expect(tampered).toMatchObject({ kind: 'failed', check: 'signature' });
  });
});
