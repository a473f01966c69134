import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import * as encryptionSdk from '@aws-crypto/client-node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import {
  createKmsKeyWrapping,
  EnvelopeSealer,
  type EnvelopeSealerProps,
  SEALING_FRAME_LENGTH,
} from '../../lambdas/adapters/envelope-sealer.js';
import { LocalKeyring } from '../../lambdas/adapters/local-keyring.js';
import { CountersignError } from '../../lambdas/core/errors.js';
import type { SealPurpose } from '../../lambdas/core/ports.js';
import { resolveProjectPath } from '../../lib/project-path.js';
import { type FakeKmsServer, startFakeKmsServer } from '../support/fake-kms-server.js';

type SealerOptions = Omit<EnvelopeSealerProps, 'keyWrapping' | 'callCounter'>;

/** One way of wrapping sealing keys; each `createSealer` is a fresh container (cold cache). */
interface KeyringHarness {
  readonly counter: AwsCallCounter;
  createSealer(options?: SealerOptions): Promise<EnvelopeSealer>;
  /** What the key service itself saw, when there is one to ask. */
  serviceCounts(): Record<string, number> | undefined;
  close(): Promise<void>;
}

async function startLocalHarness(): Promise<KeyringHarness> {
  const directory = await mkdtemp(join(tmpdir(), 'countersign-keyring-'));
  const counter = new AwsCallCounter();
  return {
    counter,
    createSealer: async (options = {}) =>
      new EnvelopeSealer({
        ...options,
        keyWrapping: await new LocalKeyring(directory).keyWrapping(),
        callCounter: counter,
      }),
    serviceCounts: () => undefined,
    close: () => rm(directory, { recursive: true, force: true }),
  };
}

async function startKmsHarness(): Promise<KeyringHarness> {
  const kms: FakeKmsServer = await startFakeKmsServer();
  const counter = new AwsCallCounter();
  return {
    counter,
    createSealer: async (options = {}) =>
      new EnvelopeSealer({
        ...options,
        keyWrapping: createKmsKeyWrapping({
          keyArn: kms.keyArn,
          clientConfig: {
            endpoint: kms.endpoint,
            credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
            maxAttempts: 1,
          },
          callCounter: counter,
        }),
        // Also handed to the sealer: with the KMS keyring it must not count a second time.
        callCounter: counter,
      }),
    serviceCounts: () => kms.requestCounts(),
    close: () => kms.stop(),
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const SEALING_KEY_CONTEXT = Buffer.from('countersign:sealing-key');

async function expectRefused(promise: Promise<unknown>): Promise<CountersignError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CountersignError);
  const refusal = error as CountersignError;
  expect(refusal.code).toBe('sealed-state-rejected');
  expect(refusal.message).toMatch(/^The sealed run state was refused: [a-z ]+\.$/);
  return refusal;
}

/** Where a blob's header holds the wrapped sealing key: the context value after its key. */
function locateWrappedKey(blob: Uint8Array): { offset: number; length: number } {
  const bytes = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  const keyAt = bytes.indexOf(SEALING_KEY_CONTEXT);
  expect(keyAt).toBeGreaterThan(0);
  const lengthAt = keyAt + SEALING_KEY_CONTEXT.byteLength;
  return { offset: lengthAt + 2, length: bytes.readUInt16BE(lengthAt) };
}

describe.each([
  { name: 'local keyring', start: startLocalHarness },
  { name: 'KMS keyring (fake KMS)', start: startKmsHarness },
])('EnvelopeSealer with the $name', ({ start }) => {
  let harness: KeyringHarness;

  beforeAll(async () => {
    harness = await start();
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.counter.reset();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('round-trips bytes for every purpose without leaving the plaintext readable', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const plaintext = encoder.encode(JSON.stringify({ transcript: 'the quick brown fox '.repeat(200) }));
    const purposes: SealPurpose[] = ['run-state', 'approval-card', 'task-token'];

    for (const purpose of purposes) {
      // Act
      const sealed = await sealer.seal(purpose, 'run-1', plaintext);
      const unsealed = await sealer.unseal(purpose, 'run-1', sealed);

      // Assess
      expect(decoder.decode(unsealed)).toBe(decoder.decode(plaintext));
      expect(Buffer.from(sealed).includes(Buffer.from('quick brown fox'))).toBe(false);
    }
  });

  it('round-trips through another container that shares only the key wrapping', async () => {
    // Prepare
    const sealing = await harness.createSealer();
    const sealed = await sealing.seal('run-state', 'run-2', encoder.encode('state'));
    const reading = await harness.createSealer();

    // Act
    const unsealed = await reading.unseal('run-state', 'run-2', sealed);

    // Assess
    expect(decoder.decode(unsealed)).toBe('state');
  });

  it('seals each blob as one Encryption SDK message of the committing suite, naming its run and purpose', async () => {
    // Prepare
    const sealer = await harness.createSealer();

    // Act
    const sealed = Buffer.from(await sealer.seal('approval-card', 'run-format', encoder.encode('card')));

    // Assess: message format 2, suite 0x0478, the context in the header in the clear
    expect(sealed[0]).toBe(2);
    expect(sealed.readUInt16BE(1)).toBe(
      encryptionSdk.AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY,
    );
    for (const text of ['countersign:run', 'run-format', 'countersign:purpose', 'approval-card']) {
      expect(sealed.includes(Buffer.from(text))).toBe(true);
    }
    expect(sealed.includes(Buffer.from('countersign:encoding\u0000\u0006brotli'))).toBe(true);
  });

  it('refuses a blob with a byte flipped in its header, its wrapped key, its body or its tag', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const sealed = await sealer.seal('run-state', 'run-3', encoder.encode('state to protect'));
    const wrappedKey = locateWrappedKey(sealed);
    const positions = [
      0,
      1,
      3,
      40,
      wrappedKey.offset,
      wrappedKey.offset + Math.floor(wrappedKey.length / 2),
      wrappedKey.offset + wrappedKey.length - 1,
      Math.floor(sealed.length * 0.8),
      sealed.length - 20,
      sealed.length - 1,
    ];

    for (const position of positions) {
      const tampered = Uint8Array.from(sealed);
      tampered[position] = (tampered[position] ?? 0) ^ 0x01;

      // Act + Assess
      await expectRefused(sealer.unseal('run-state', 'run-3', tampered));
    }
  });

  it('refuses a blob sealed for run A when it is read for run B', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const sealed = await sealer.seal('task-token', 'run-A', encoder.encode('token'));

    // Act
    const refusal = await expectRefused(sealer.unseal('task-token', 'run-B', sealed));

    // Assess
    expect(refusal.message).toContain('another run');
  });

  it('refuses a blob sealed for another purpose', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const sealed = await sealer.seal('approval-card', 'run-4', encoder.encode('card'));

    // Act
    const refusal = await expectRefused(sealer.unseal('task-token', 'run-4', sealed));

    // Assess
    expect(refusal.message).toContain('another purpose');
  });

  it('refuses a blob cut short, a blob with bytes after its end, an unknown version and empty input', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const sealed = await sealer.seal('run-state', 'run-5', encoder.encode('state'));
    const otherVersion = Uint8Array.from(sealed);
    otherVersion[0] = 3;

    // Act + Assess
    await expectRefused(sealer.unseal('run-state', 'run-5', sealed.subarray(0, sealed.length - 1)));
    await expectRefused(sealer.unseal('run-state', 'run-5', sealed.subarray(0, 40)));
    for (const tail of [[0], [0, 0, 0, 0], Array.from(sealed.subarray(sealed.length - 60))]) {
      const extended = new Uint8Array([...sealed, ...tail]);
      const refusal = await expectRefused(sealer.unseal('run-state', 'run-5', extended));
      expect(refusal.message).toContain('does not end where its message ends');
    }
    await expectRefused(sealer.unseal('run-state', 'run-5', new Uint8Array(0)));
    await expectRefused(sealer.unseal('run-state', 'run-5', otherVersion));
  });

  it('refuses a blob whose header names another sealing key than the one its data key is wrapped under', async () => {
    // Prepare: two containers, two sealing keys, wrapped keys of the same length
    const first = await (await harness.createSealer()).seal('run-state', 'run-5', encoder.encode('state'));
    const second = await (await harness.createSealer()).seal('run-state', 'run-5', encoder.encode('state'));
    const firstKey = locateWrappedKey(first);
    const secondKey = locateWrappedKey(second);
    expect(firstKey.length).toBe(secondKey.length);
    const spliced = Uint8Array.from(first);
    spliced.set(second.subarray(secondKey.offset, secondKey.offset + secondKey.length), firstKey.offset);
    expect(Buffer.from(spliced).equals(Buffer.from(first))).toBe(false);

    // Act
    const refusal = await expectRefused((await harness.createSealer()).unseal('run-state', 'run-5', spliced));

    // Assess
    expect(refusal.message).toContain('failed authentication');
  });

  it('seals every blob under a fresh message id, so one plaintext never seals to the same bytes', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const plaintext = encoder.encode('the same state');

    // Act
    const sealed = await Promise.all(
      Array.from({ length: 50 }, () => sealer.seal('run-state', 'run-5', plaintext)),
    );

    // Assess: the message id (bytes 3-34) and the whole blob differ every time, under one sealing key
    expect(new Set(sealed.map((blob) => Buffer.from(blob.subarray(3, 35)).toString('hex'))).size).toBe(50);
    expect(new Set(sealed.map((blob) => Buffer.from(blob).toString('hex'))).size).toBe(50);
    expect(harness.counter.snapshot()).toEqual({ 'KMS:GenerateDataKey': 1 });
  });

  it('refuses a blob of another run or purpose before unwrapping its key: no KMS call', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const sealed = await sealer.seal('run-state', 'run-5', encoder.encode('state'));
    const other = await harness.createSealer();
    harness.counter.reset();

    // Act + Assess
    expect((await expectRefused(other.unseal('run-state', 'run-6', sealed))).message).toContain(
      'another run',
    );
    expect((await expectRefused(other.unseal('task-token', 'run-5', sealed))).message).toContain(
      'another purpose',
    );
    expect(harness.counter.snapshot()).toEqual({});
  });

  it('costs one Decrypt to unseal cold, then nothing more to seal two blobs (a pause)', async () => {
    // Prepare
    const earlier = await harness.createSealer();
    const runState = await earlier.seal('run-state', 'run-6', encoder.encode('state'));
    harness.counter.reset();
    const before = harness.serviceCounts();
    const sealer = await harness.createSealer();

    // Act
    await sealer.unseal('run-state', 'run-6', runState);
    const afterUnseal = harness.counter.snapshot();
    const card = await sealer.seal('approval-card', 'run-6', encoder.encode('card'));
    await sealer.seal('task-token', 'run-6', encoder.encode('token'));

    // Assess: the card names the run state's sealing key
    expect(afterUnseal).toEqual({ 'KMS:Decrypt': 1 });
    expect(harness.counter.snapshot()).toEqual({ 'KMS:Decrypt': 1 });
    const after = harness.serviceCounts();
    if (before && after) expect((after.Decrypt ?? 0) - (before.Decrypt ?? 0)).toBe(1);
    const [stateKey, cardKey] = [runState, card].map((blob) => {
      const { offset, length } = locateWrappedKey(blob);
      return Buffer.from(blob.subarray(offset, offset + length)).toString();
    });
    expect(cardKey).toBe(stateKey);
  });

  it('costs one GenerateDataKey for a fresh container that only seals', async () => {
    // Prepare
    const sealer = await harness.createSealer();

    // Act
    const sealed = await Promise.all(
      ['a', 'b', 'c'].map((runId) => sealer.seal('run-state', runId, encoder.encode(runId))),
    );
    await sealer.unseal('run-state', 'a', sealed[0] ?? new Uint8Array());

    // Assess
    expect(harness.counter.snapshot()).toEqual({ 'KMS:GenerateDataKey': 1 });
  });

  it('unseals an inbox page of cards from one container with one Decrypt, whatever its size', async () => {
    // Prepare
    const sealing = await harness.createSealer();
    const cards = await Promise.all(
      Array.from({ length: 25 }, (_, index) =>
        sealing.seal('approval-card', `run-${index}`, encoder.encode(`card ${index}`)),
      ),
    );
    harness.counter.reset();
    const reading = await harness.createSealer();

    // Act
    const unsealed = await Promise.all(
      cards.map((card, index) => reading.unseal('approval-card', `run-${index}`, card)),
    );

    // Assess
    expect(unsealed.map((bytes) => decoder.decode(bytes))).toEqual(cards.map((_, index) => `card ${index}`));
    expect(harness.counter.snapshot()).toEqual({ 'KMS:Decrypt': 1 });
  });

  it('generates a new sealing key after the blob bound and after the age bound', async () => {
    // Prepare
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-01-01T00:00:00Z') });
    const sealer = await harness.createSealer({ maxBlobsPerSealingKey: 2, sealingKeyLifetimeMs: 60_000 });

    // Act
    for (let index = 0; index < 5; index += 1) await sealer.seal('run-state', 'run-7', encoder.encode('x'));
    const afterBlobBound = harness.counter.snapshot();
    vi.setSystemTime(Date.now() + 60_000);
    await sealer.seal('run-state', 'run-7', encoder.encode('x'));

    // Assess
    expect(afterBlobBound).toEqual({ 'KMS:GenerateDataKey': 3 });
    expect(harness.counter.snapshot()).toEqual({ 'KMS:GenerateDataKey': 4 });
  });

  it('forgets unwrapped keys after their cache lifetime and beyond the cache size', async () => {
    // Prepare
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-01-01T00:00:00Z') });
    const sealing = await harness.createSealer({ maxBlobsPerSealingKey: 1 });
    const [first, second, third] = await Promise.all(
      ['first', 'second', 'third'].map((text) => sealing.seal('run-state', 'run-8', encoder.encode(text))),
    );
    const reading = await harness.createSealer({ maxCachedKeys: 1, cachedKeyLifetimeMs: 1000 });
    const unseal = (sealed: Uint8Array | undefined) =>
      reading.unseal('run-state', 'run-8', sealed ?? new Uint8Array());
    harness.counter.reset();

    // Act
    await unseal(first);
    await unseal(first);
    const cached = harness.counter.snapshot();
    await unseal(second);
    await unseal(third);
    await unseal(first);
    const currentKept = harness.counter.snapshot();
    await unseal(second);
    const evicted = harness.counter.snapshot();
    vi.setSystemTime(Date.now() + 1000);
    await unseal(first);

    // Assess
    expect(cached).toEqual({ 'KMS:Decrypt': 1 });
    // The first key became this container's sealing key, so eviction does not make it cost again.
    expect(currentKept).toEqual({ 'KMS:Decrypt': 3 });
    expect(evicted).toEqual({ 'KMS:Decrypt': 4 });
    expect(harness.counter.snapshot()).toEqual({ 'KMS:Decrypt': 5 });
  });

  it('round-trips a 2 MiB incompressible state (two full frames and an empty final one)', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const plaintext = new Uint8Array(2 * SEALING_FRAME_LENGTH);
    for (let offset = 0; offset < plaintext.length; offset += 65_536) {
      crypto.getRandomValues(plaintext.subarray(offset, offset + 65_536));
    }

    // Act
    const sealed = await sealer.seal('run-state', 'run-9', plaintext);
    const unsealed = await sealer.unseal('run-state', 'run-9', sealed);

    // Assess
    expect(Buffer.from(unsealed).equals(Buffer.from(plaintext))).toBe(true);
    await expectRefused(
      sealer.unseal('run-state', 'run-9', new Uint8Array([...sealed.subarray(-40), ...sealed])),
    );
  });
});

describe('EnvelopeSealer bodies and frames', () => {
  let directory: string;
  let sealer: EnvelopeSealer;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'countersign-bodies-'));
    sealer = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(directory).keyWrapping() });
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('compresses a compressible state and leaves an incompressible one uncompressed, both unsealing', async () => {
    // Prepare
    const json = encoder.encode(
      JSON.stringify(Array.from({ length: 5000 }, (_, index) => ({ index, tool: 'get_page', ok: true }))),
    );
    const random = new Uint8Array(randomBytes(200_000));

    // Act
    const sealedJson = await sealer.seal('run-state', 'run-1', json);
    const sealedRandom = await sealer.seal('run-state', 'run-1', random);

    // Assess
    expect(sealedJson.byteLength).toBeLessThan(json.byteLength / 5);
    expect(sealedRandom.byteLength).toBeLessThan(random.byteLength + 2_000);
    expect(Buffer.from(sealedRandom).includes(Buffer.from('countersign:encoding\u0000\u0008identity'))).toBe(
      true,
    );
    expect(Buffer.from(await sealer.unseal('run-state', 'run-1', sealedJson)).equals(json)).toBe(true);
    expect(Buffer.from(await sealer.unseal('run-state', 'run-1', sealedRandom)).equals(random)).toBe(true);
  });

  it.each([0, 1, 4095, 4096, 4097, 3 * 4096, 40_000])(
    'unseals %i incompressible bytes across frame lengths both ways (4 KiB and 1 MiB)',
    async (size) => {
      // Prepare: over 32 KiB the sample leaves the body uncompressed, so its length sets the frames
      const small = new EnvelopeSealer({
        keyWrapping: await new LocalKeyring(directory).keyWrapping(),
        frameLength: 4096,
      });
      const plaintext = new Uint8Array(randomBytes(size));

      // Act
      const bySmall = await sealer.unseal(
        'run-state',
        'run-1',
        await small.seal('run-state', 'run-1', plaintext),
      );
      const byDefault = await small.unseal(
        'run-state',
        'run-2',
        await sealer.seal('run-state', 'run-2', plaintext),
      );

      // Assess
      expect(Buffer.from(bySmall).equals(Buffer.from(plaintext))).toBe(true);
      expect(Buffer.from(byDefault).equals(Buffer.from(plaintext))).toBe(true);
    },
  );

  it('refuses a purpose that is not one, and an empty run id, as a programming error', async () => {
    // Act + Assess
    await expect(sealer.seal('' as SealPurpose, 'run-1', new Uint8Array(1))).rejects.toMatchObject({
      code: 'internal',
    });
    await expect(sealer.unseal('run-state', '', new Uint8Array(1))).rejects.toMatchObject({
      code: 'internal',
    });
  });
});

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

describe('LocalKeyring', () => {
  it('creates the master key once with mode 0600 and reads it back in a later process', async () => {
    // Prepare
    const directory = await mkdtemp(join(tmpdir(), 'countersign-keyring-'));
    try {
      const first = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(directory).keyWrapping() });
      const sealed = await first.seal('run-state', 'run-1', encoder.encode('survives a restart'));

      // Act
      const afterRestart = new EnvelopeSealer({
        keyWrapping: await new LocalKeyring(directory).keyWrapping(),
      });
      const unsealed = await afterRestart.unseal('run-state', 'run-1', sealed);

      // Assess
      expect(decoder.decode(unsealed)).toBe('survives a restart');
      const file = await stat(join(directory, 'master-key.bin'));
      expect(file.size).toBe(32);
      expect(file.mode & 0o777).toBe(0o600);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('cannot unseal what another local master key sealed', async () => {
    // Prepare
    const directoryA = await mkdtemp(join(tmpdir(), 'countersign-keyring-'));
    const directoryB = await mkdtemp(join(tmpdir(), 'countersign-keyring-'));
    try {
      const sealerA = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(directoryA).keyWrapping() });
      const sealerB = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(directoryB).keyWrapping() });
      const sealed = await sealerA.seal('run-state', 'run-1', encoder.encode('secret'));

      // Act
      const refusal = await expectRefused(sealerB.unseal('run-state', 'run-1', sealed));

      // Assess
      expect(refusal.message).toContain('could not be unwrapped');
    } finally {
      await rm(directoryA, { recursive: true, force: true });
      await rm(directoryB, { recursive: true, force: true });
    }
  });
});
