import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveProjectPath } from '../../lib/project-path.js';
import { startFakeKmsServer } from '../support/fake-kms-server.js';
import { bundle, useBundleDirectory } from './handler-bundles-support.js';

describe('the Lambda handler bundles', () => {
  const bundles = useBundleDirectory();

  it('keep the sealer sealing through the Encryption SDK beside the bundle, refusing tampering, another run and an extended blob, and carrying 2 MB', async () => {
    // Prepare
    const metafile = await bundle(
      resolveProjectPath('test/infra/fixtures/sealer-bundle-entry.ts'),
      bundles.directory,
      'sealer',
      { withSideModules: true },
    );
    const bundled = await import(pathToFileURL(join(bundles.directory, 'sealer.mjs')).href);
    const keysDirectory = join(bundles.directory, 'keys');
    const sealer = new bundled.EnvelopeSealer({
      keyWrapping: await new bundled.LocalKeyring(keysDirectory).keyWrapping(),
    });
    const state = new TextEncoder().encode(JSON.stringify({ transcript: 'x'.repeat(64) }));
    const large = randomBytes(2 * 1024 * 1024);

    // Act
    const sealed: Uint8Array = await sealer.seal('run-state', 'run-1', state);
    const flipped = Uint8Array.from(sealed);
    flipped[flipped.length - 40] = (flipped[flipped.length - 40] ?? 0) ^ 0x01;
    const extended = new Uint8Array([...sealed, 0]);
    const sealedLarge: Uint8Array = await sealer.seal('run-state', 'run-2', large);

    // Assess: the SDK is the side module, imported on first use only; each blob is one SDK message
    const imports = Object.values(metafile.outputs).flatMap((output) => output.imports);
    expect(imports.filter((imported) => imported.path === '@aws-crypto/client-node')).toEqual([
      { path: '@aws-crypto/client-node', kind: 'dynamic-import', external: true },
    ]);
    expect(Object.keys(metafile.inputs).filter((input) => input.includes('@aws-crypto/'))).toEqual([]);
    expect([sealed[0], sealed[1], sealed[2]]).toEqual([0x02, 0x04, 0x78]);
    expect(Buffer.from(await sealer.unseal('run-state', 'run-1', sealed))).toEqual(Buffer.from(state));
    for (const [runId, blob] of [
      ['run-1', flipped],
      ['run-other', sealed],
      ['run-1', extended],
    ] as const) {
      await expect(sealer.unseal('run-state', runId, blob)).rejects.toMatchObject({
        code: 'sealed-state-rejected',
      });
    }
    expect(Buffer.from(await sealer.unseal('run-state', 'run-2', sealedLarge)).equals(large)).toBe(true);
  });

  it('keep the sealer wrapping its keys with KMS through the Encryption SDK beside the bundle', async () => {
    // Prepare: the SDK's KMS keyring and KMS client, from the side module, against a fake KMS.
    await bundle(
      resolveProjectPath('test/infra/fixtures/sealer-bundle-entry.ts'),
      bundles.directory,
      'sealer',
      {
        withSideModules: true,
      },
    );
    const bundled = await import(pathToFileURL(join(bundles.directory, 'sealer.mjs')).href);
    const kms = await startFakeKmsServer();
    const createSealer = () =>
      new bundled.EnvelopeSealer({
        keyWrapping: bundled.createKmsKeyWrapping({
          keyArn: kms.keyArn,
          clientConfig: {
            endpoint: kms.endpoint,
            credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
            maxAttempts: 1,
          },
        }),
      });

    try {
      // Act: one container seals, a cold one unseals
      const sealed: Uint8Array = await createSealer().seal(
        'approval-card',
        'run-kms',
        new Uint8Array([1, 2, 3]),
      );
      const unsealed: Uint8Array = await createSealer().unseal('approval-card', 'run-kms', sealed);

      // Assess: the KMS client is the bundle's (the side module's default one would throw), and
      // the side module carries no copy of the AWS SDK core (its first load paid for one)
      const sideModule = await readFile(
        join(bundles.directory, 'node_modules/@aws-crypto/client-node/index.mjs'),
        'utf8',
      );
      expect([...unsealed]).toEqual([1, 2, 3]);
      expect(kms.requestCounts()).toEqual({ GenerateDataKey: 1, Decrypt: 1 });
      expect(sideModule).not.toContain('amz-sdk-invocation-id');
      expect(sideModule.length).toBeLessThan(250_000);
    } finally {
      await kms.stop();
    }
  });

  it('keep the Encryption SDK signing suites working with the one bn.js (asn1.js and the curve math)', async () => {
    // Prepare: a signing suite reaches asn1.js (PEM keys) and bn.js (point decompression).
    await bundle(
      resolveProjectPath('test/infra/fixtures/encryption-sdk-bundle-entry.ts'),
      bundles.directory,
      'sdk',
      {
        withSideModules: true,
      },
    );
    const sdk = await import(pathToFileURL(join(bundles.directory, 'sdk.mjs')).href);
    const keyring = new sdk.RawAesKeyringNode({
      keyName: 'test',
      keyNamespace: 'countersign-test',
      unencryptedMasterKey: new Uint8Array(randomBytes(32)),
      wrappingSuite: sdk.RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
    });
    const client = sdk.buildClient(sdk.CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT);
    const plaintext = randomBytes(100_000);

    // Act
    const { result } = await client.encrypt(keyring, plaintext, {
      suiteId: sdk.AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY_ECDSA_P384,
    });
    const decrypted = await client.decrypt(keyring, result);
    const tampered = Buffer.from(result);
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] ?? 0) ^ 0x01;

    // Assess
    expect(Buffer.from(decrypted.plaintext).equals(plaintext)).toBe(true);
    expect(decrypted.messageHeader.suiteId).toBe(
      sdk.AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY_ECDSA_P384,
    );
    await expect(client.decrypt(keyring, tampered)).rejects.toThrow();
  });
});
