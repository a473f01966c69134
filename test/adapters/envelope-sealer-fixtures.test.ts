import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import * as encryptionSdk from '@aws-crypto/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvelopeSealer } from '../../lambdas/adapters/envelope-sealer.js';
import { LocalKeyring } from '../../lambdas/adapters/local-keyring.js';
import { resolveProjectPath } from '../../lib/project-path.js';
import { expectRefused, locateWrappedKey } from './envelope-sealer-support.js';

describe('EnvelopeSealer and the sealed-blob fixtures', () => {
  const fixtures = resolveProjectPath('test/fixtures/sealed-blobs');
  let directory: string;
  let sealer: EnvelopeSealer;
  const fixture = async (name: string) => new Uint8Array(await readFile(join(fixtures, name)));

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'countersign-blob-fixtures-'));
    await copyFile(join(fixtures, 'master-key.bin'), join(directory, 'master-key.bin'));
    sealer = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(directory).keyWrapping() });
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it.each([
    {
      name: 'format-3.blob',
      sha256: '16df2bdfa8fdd6bf605c2b84d3f7aff57ba20c08cc2fcb67d4fe707744e3a0f3',
    },
    {
      name: 'format-3-identity-4k-frames.blob',
      sha256: 'b03091d055c05bb2442cc084dc31e2601f1e86ea27cecc225af82e6a4313f538',
    },
  ])('unseals the stored $name, and only for its run and purpose', async ({ name, sha256 }) => {
    // Prepare
    const sealed = await fixture(name);

    // Act
    const plaintext = await sealer.unseal('run-state', 'run-fixture', sealed);

    // Assess
    expect(createHash('sha256').update(plaintext).digest('hex')).toBe(sha256);
    expect((await expectRefused(sealer.unseal('run-state', 'run-other', sealed))).message).toContain(
      'another run',
    );
    expect((await expectRefused(sealer.unseal('approval-card', 'run-fixture', sealed))).message).toContain(
      'another purpose',
    );
  });

  it.each([
    { name: 'format-3-truncated.blob', runId: 'run-fixture', reason: 'failed authentication' },
    { name: 'format-3-extended.blob', runId: 'run-fixture', reason: 'does not end where its message ends' },
    { name: 'format-3-future-version.blob', runId: 'run-fixture', reason: 'failed authentication' },
    { name: 'format-3-labelled-version-1.blob', runId: 'run-fixture', reason: 'failed authentication' },
    { name: 'format-3-wrong-commitment.blob', runId: 'run-fixture', reason: 'failed authentication' },
    { name: 'format-3-relabelled-run.blob', runId: 'run-fixture', reason: 'another run' },
    { name: 'format-3-relabelled-run.blob', runId: 'run-fixturx', reason: 'failed authentication' },
    { name: 'format-3-non-committing-suite.blob', runId: 'run-fixture', reason: 'failed authentication' },
    { name: 'format-3-signing-suite.blob', runId: 'run-fixture', reason: 'unknown format' },
    { name: 'v2.blob', runId: 'run-fixture', reason: 'failed authentication' },
    { name: 'frame-4096.blob', runId: 'run-fixture', reason: 'failed authentication' },
  ])('refuses $name read for $runId ($reason)', async ({ name, runId, reason }) => {
    // Prepare
    const sealed = await fixture(name);

    // Act
    const refusal = await expectRefused(sealer.unseal('run-state', runId, sealed));

    // Assess
    expect(refusal.message).toContain(reason);
  });

  it('refuses the stored blob with any one of its bytes flipped, at every offset', async () => {
    // Prepare
    const sealed = await fixture('format-3.blob');
    const accepted: number[] = [];

    // Act
    for (let position = 0; position < sealed.length; position += 1) {
      const tampered = Uint8Array.from(sealed);
      tampered[position] = (tampered[position] ?? 0) ^ 0x01;
      await sealer.unseal('run-state', 'run-fixture', tampered).then(
        () => accepted.push(position),
        (error: unknown) => expect(error).toMatchObject({ code: 'sealed-state-rejected' }),
      );
    }

    // Assess
    expect(accepted).toEqual([]);
  });

  it('is an Encryption SDK message the SDK itself opens with the documented keyrings', async () => {
    // Prepare: the raw AES keyring over the master key opens the sealing key the context names
    const sealed = await fixture('format-3.blob');
    const { offset, length } = locateWrappedKey(sealed);
    const wrappedKey = Buffer.from(
      Buffer.from(sealed.subarray(offset, offset + length)).toString(),
      'base64',
    );
    const client = encryptionSdk.buildClient(encryptionSdk.CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT);
    const rawAesKeyring = (keyNamespace: string, keyName: string, key: Uint8Array) =>
      new encryptionSdk.RawAesKeyringNode({
        keyNamespace,
        keyName,
        unencryptedMasterKey: Uint8Array.from(key),
        wrappingSuite: encryptionSdk.RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
      });
    const masterKey = await readFile(join(fixtures, 'master-key.bin'));

    // Act
    const sealingKey = await client.decrypt(
      rawAesKeyring('countersign-local', 'master-key', masterKey),
      wrappedKey,
    );
    const blob = await client.decrypt(
      rawAesKeyring('countersign', 'sealing-key', sealingKey.plaintext),
      sealed,
    );

    // Assess
    expect(sealingKey.messageHeader.encryptionContext).toEqual({ 'countersign:purpose': 'sealing-key' });
    expect(sealingKey.plaintext.byteLength).toBe(32);
    expect(blob.messageHeader.encryptionContext).toMatchObject({
      'countersign:run': 'run-fixture',
      'countersign:purpose': 'run-state',
      'countersign:encoding': 'brotli',
    });
    expect(createHash('sha256').update(brotliDecompressSync(blob.plaintext)).digest('hex')).toBe(
      '16df2bdfa8fdd6bf605c2b84d3f7aff57ba20c08cc2fcb67d4fe707744e3a0f3',
    );
  });
});
