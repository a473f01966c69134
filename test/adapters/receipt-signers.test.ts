import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchReceiptPublicKey } from '../../lambdas/adapters/kms-receipt-public-key.js';
import { KmsReceiptSigner } from '../../lambdas/adapters/kms-receipt-signer.js';
import {
  LOCAL_RECEIPT_KEY_FILE,
  LocalReceiptSigner,
  localReceiptKeyId,
} from '../../lambdas/adapters/local-receipt-signer.js';
import { InMemoryReceiptChainStore } from '../../lambdas/adapters/memory/in-memory-receipt-chain-store.js';
import type { ReceiptSigner } from '../../lambdas/core/receipts/receipt-ports.js';
import { verifyReceipt } from '../../lambdas/core/receipts/verify-receipt.js';
import { type FakeKmsServer, startFakeKmsServer } from '../support/fake-kms-server.js';
import {
  createTestSigner,
  readSampleReceipt,
  recordSampleChain,
  steppingClock,
} from '../support/receipt-chains.js';

/** One contract for both signers: what they sign verifies offline against the public key they name. */
describe('receipt signers', () => {
  let kms: FakeKmsServer;
  let client: KMSClient;

  beforeAll(async () => {
    kms = await startFakeKmsServer();
    client = new KMSClient({
      region: kms.region,
      endpoint: kms.endpoint,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
  });

  afterAll(async () => {
    client.destroy();
    await kms.stop();
  });

  it('KMS: signs each approval and decision with one Sign call, verifiable with the key GetPublicKey returns', async () => {
    // Prepare
    const signer = new KmsReceiptSigner({ client, keyArn: kms.signingKeyArn });
    const chain = new InMemoryReceiptChainStore();
    const before = kms.requestCounts().Sign ?? 0;

    // Act
    await recordSampleChain({ chain, signer, clock: steppingClock() }, 'run-1', 'reject');
    const key = await fetchReceiptPublicKey(client, kms.signingKeyAlias);

    // Assess
    expect((kms.requestCounts().Sign ?? 0) - before).toBe(4);
    expect(key.keyId).toBe(kms.signingKeyArn);
    expect(verifyReceipt(await readSampleReceipt(chain, 'run-1'), key)).toMatchObject({ kind: 'verified' });
  });

  it('local: signs under the key id its public key names, and a restart loads the same key', async () => {
    // Prepare
    const { signer, publicKey } = await createTestSigner();
    const chain = new InMemoryReceiptChainStore();

    // Act
    await recordSampleChain({ chain, signer, clock: steppingClock() }, 'run-1', 'expiry');
    const keyId = await signer.signingKeyId();

    // Assess
    expect(keyId).toBe(localReceiptKeyId(publicKey));
    expect(verifyReceipt(await readSampleReceipt(chain, 'run-1'), { publicKey, keyId })).toMatchObject({
      kind: 'verified',
      unsignedTail: 1,
    });
  });

  it('local: keeps the private key owner-only (0600) and refuses a key file that is not a P-256 key', async () => {
    // Prepare
    const directory = join(await mkdtemp(join(tmpdir(), 'countersign-receipt-key-')), 'keys');
    const first = new LocalReceiptSigner(directory);
    const keyId = await first.signingKeyId();

    // Act
    const mode = (await stat(join(directory, LOCAL_RECEIPT_KEY_FILE))).mode & 0o777;
    const reloaded = await new LocalReceiptSigner(directory).signingKeyId();
    await writeFile(join(directory, LOCAL_RECEIPT_KEY_FILE), 'not a key');
    const broken = new LocalReceiptSigner(directory).signingKeyId();

    // Assess
    expect(mode).toBe(0o600);
    expect(reloaded).toBe(keyId);
    await expect(broken).rejects.toMatchObject({
      code: 'configuration',
      message: expect.stringContaining(LOCAL_RECEIPT_KEY_FILE),
    });
  });

  it('refuses to take a key that is not a P-256 signing key for ECDSA_SHA_256, naming it', async () => {
    // Act
    const fetching = fetchReceiptPublicKey(client, kms.keyArn);

    // Assess: the symmetric key has no public key
    await expect(fetching).rejects.toThrow();
  });

  it('a signature by another key does not verify (each signer is checked against its own key)', async () => {
    // Prepare
    const chain = new InMemoryReceiptChainStore();
    const kmsSigner: ReceiptSigner = new KmsReceiptSigner({ client, keyArn: kms.signingKeyArn });
    const { publicKey: localKey } = await createTestSigner();
    await recordSampleChain({ chain, signer: kmsSigner, clock: steppingClock() }, 'run-2', 'reject');

    // Act
    const verification = verifyReceipt(await readSampleReceipt(chain, 'run-2'), { publicKey: localKey });

    // Assess
    expect(verification).toMatchObject({ kind: 'failed', check: 'signature', entry: 0 });
  });
});
