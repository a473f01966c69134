import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendChainEntry } from '../../../lambdas/core/receipts/append-chain-entry.js';
import { chainEntrySchema, type SignedChainEntry } from '../../../lambdas/core/receipts/chain-entry.js';
import { draftExpiryEntry } from '../../../lambdas/core/receipts/draft-chain-entries.js';
import { hashEntry, signedContentOf, signedMessageOf } from '../../../lambdas/core/receipts/entry-hashes.js';
import { verifyReceipt } from '../../../lambdas/core/receipts/verify-receipt.js';
import {
  createChainDependencies,
  readSampleReceipt,
  recordSampleChain,
} from '../../support/receipt-chains.js';
import { type Json, leafPaths, tamper } from '../../support/receipt-tampering.js';

type Receipt = Awaited<ReturnType<typeof readSampleReceipt>>;
type Entry = Record<string, Json>;

/** The same receipt with entry `position` replaced. */
function replacing(receipt: Receipt, position: number, entry: Json): Receipt {
  return { ...receipt, entries: receipt.entries.map((each, index) => (index === position ? entry : each)) };
}

/** Entry version 3 (issue #25): per-call choices and edits, bound and signed; version 1 still verifies. */
describe('verifyReceipt on per-call decisions and edits', () => {
  let dependencies: Awaited<ReturnType<typeof createChainDependencies>>;
  let perCall: Receipt;
  let edited: Receipt;

  beforeAll(async () => {
    dependencies = await createChainDependencies();
    await recordSampleChain(dependencies, 'run-per-call', 'per-call');
    await recordSampleChain(dependencies, 'run-edit', 'edit');
    perCall = await readSampleReceipt(dependencies.chain, 'run-per-call');
    edited = await readSampleReceipt(dependencies.chain, 'run-edit');
  });

  const verify = (candidate: unknown) => verifyReceipt(candidate, { publicKey: dependencies.publicKey });

  it('binds each call’s choice, a refusal’s reason by its hash, and each edited call’s arguments by theirs', () => {
    // Act
    const verifications = [verify(perCall), verify(edited)];
    const decision = perCall.entries[3] as Entry;
    const edit = edited.entries[3] as Entry;

    // Assess
    expect(verifications[0]).toMatchObject({
      kind: 'verified',
      entries: [
        {},
        {},
        { decision: 'approve', approvers: ['ana', 'bo'] },
        { kind: 'decision', decision: 'approve', by: 'ana', refusedCalls: [1], signed: true },
      ],
    });
    expect(verifications[1]).toMatchObject({
      kind: 'verified',
      entries: [{}, {}, {}, { kind: 'edit', by: 'ana', editedCalls: [0], signed: true }],
    });
    expect(decision).toMatchObject({
      schemaVersion: 3,
      choices: [
        { index: 0, decision: 'approve' },
        { index: 1, decision: 'reject', reasonHash: expect.stringMatching(/^sha256:/) },
      ],
    });
    expect(JSON.stringify(decision)).not.toContain('frozen');
    expect(edit).toMatchObject({
      kind: 'edit',
      editedBy: { userId: 'ana', subject: 'ana' },
      edits: [{ index: 0, argumentsHash: expect.any(String), originalArgumentsHash: expect.any(String) }],
    });
    expect(JSON.stringify(edit)).not.toContain('Spring sale');
  });

  it('detects a change to any field of a per-call decision or an edit, at that entry', () => {
    // Prepare
    const cases = [perCall, edited].flatMap((receipt) => {
      const entry = receipt.entries[3] as Json;
      return leafPaths(entry).map((path) => ({ receipt, path, ...tamper(entry, path) }));
    });

    // Act
    const outcomes = cases.map(({ receipt, path, entry, keepsFormat }) => ({
      field: path.join('.'),
      keepsFormat,
      verification: verify(replacing(receipt, 3, entry)),
    }));

    // Assess
    expect(cases.length).toBeGreaterThan(40);
    for (const { field, keepsFormat, verification } of outcomes) {
      expect(verification, field).toMatchObject({ kind: 'failed', entry: 3 });
      if (keepsFormat && verification.kind === 'failed') {
        expect(['signature', 'chain', 'sequence', 'run', 'policy', 'calls'], field).toContain(
          verification.check,
        );
      }
    }
  });

  it('names the tampered choice or edit: by what the entry says of its calls, else by its signature', () => {
    // Prepare
    const decision = perCall.entries[3] as Entry;
    const edit = edited.entries[3] as Entry;
    const choices = decision.choices as Entry[];
    const [firstEdit] = edit.edits as Entry[];

    // Act
    const outcomes = [
      // the approved call said refused: an approval that refuses every call
      { ...decision, choices: [{ ...choices[0], decision: 'reject' }, choices[1]] },
      // the refused call said approved: consistent, so only the signature can tell
      { ...decision, choices: [choices[0], { index: 1, decision: 'approve' }] },
      // another reason
      { ...decision, choices: [choices[0], { ...choices[1], reasonHash: `sha256:${'1'.repeat(64)}` }] },
      // a call named twice
      { ...decision, choices: [choices[0], { ...choices[1], index: 0 }] },
      // an edit that says it changed nothing
      { ...edit, edits: [{ ...firstEdit, argumentsHash: firstEdit?.originalArgumentsHash }] },
      // other edited arguments, another call edited
      { ...edit, edits: [{ ...firstEdit, argumentsHash: `sha256:${'2'.repeat(64)}` }] },
      { ...edit, edits: [{ ...firstEdit, index: 1 }] },
    ].map((entry, index) => verify(replacing(index < 4 ? perCall : edited, 3, entry as Json)));

    // Assess
    expect(outcomes.map((outcome) => outcome.kind === 'failed' && [outcome.check, outcome.entry])).toEqual([
      ['calls', 3],
      ['signature', 3],
      ['signature', 3],
      ['calls', 3],
      ['calls', 3],
      ['signature', 3],
      ['signature', 3],
    ]);
    expect(outcomes[0]).toMatchObject({ message: 'Entry 3 is an approval that refuses every call.' });
    expect(outcomes[3]).toMatchObject({ message: 'Entry 3 names a call twice.' });
    expect(outcomes[4]).toMatchObject({ message: 'Entry 3 says call 0 was edited to the arguments it had.' });
  });

  it('verifies a chain whose first entries are version 1 and whose later ones are version 3', async () => {
    // Prepare: the sample's first approval as version 1 wrote it (no choices), signed and linked
    const [approval] = perCall.entries as Entry[];
    const content = signedContentOf(
      chainEntrySchema.parse({ ...approval, runId: 'run-mixed', schemaVersion: 1 }) as SignedChainEntry,
    );
    const signature = Buffer.from(await dependencies.signer.sign(signedMessageOf(content))).toString(
      'base64',
    );
    const version1 = { ...content, signature };
    dependencies.chain.overwrite('run-mixed', 0, version1);
    await appendChainEntry(
      dependencies,
      draftExpiryEntry({ runId: 'run-mixed', turn: 2, expiredAt: '2026-03-01T12:00:00.000Z' }),
    );
    const mixed = await readSampleReceipt(dependencies.chain, 'run-mixed');

    // Act
    const verification = verify(mixed);

    // Assess
    expect((mixed.entries as Entry[]).map((entry) => entry.schemaVersion)).toEqual([1, 3]);
    expect((mixed.entries[1] as Entry).previousHash).toBe(hashEntry(chainEntrySchema.parse(version1)));
    expect(verification).toMatchObject({ kind: 'verified', unsignedTail: 1 });
  });

  it('still verifies the version 3 fixtures, one run’s chain, and names a tampered choice in them', async () => {
    // Prepare
    const fixture = (name: string) =>
      readFile(new URL(`../../fixtures/chain-entry/${name}`, import.meta.url), 'utf8');
    const publicKey = createPublicKey(await fixture('v3-public-key.pem'));
    const names = [
      'v3-edit.json',
      'v3-decision-per-call.json',
      'v3-approval-per-call.json',
      'v3-cancel.json',
    ];
    const entries = await Promise.all(names.map(async (name) => JSON.parse(await fixture(name)) as Entry));
    const receipt = { format: 'countersign-receipt', formatVersion: 1, runId: 'run-fixture-v3', entries };
    const decision = entries[1] as Entry;
    const choices = decision.choices as Entry[];

    // Act
    const verification = verifyReceipt(receipt, { publicKey });
    const tampered = verifyReceipt(
      {
        ...receipt,
        entries: entries.map((entry, index) =>
          index === 1 ? { ...decision, choices: [choices[0], { index: 1, decision: 'approve' }] } : entry,
        ),
      },
      { publicKey },
    );

    // Assess
    expect(verification).toMatchObject({
      kind: 'verified',
      unsignedTail: 1,
      entries: [
        { kind: 'edit', by: 'ana', editedCalls: [0] },
        { kind: 'decision', decision: 'approve', by: 'bo', refusedCalls: [1] },
        { kind: 'approval', by: 'cy', refusedCalls: [1] },
        { kind: 'cancel', by: 'olivia', signed: false },
      ],
    });
    expect(tampered).toMatchObject({ kind: 'failed', check: 'signature', entry: 1 });
  });
});
