import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import {
  createKmsKeyWrapping,
  EnvelopeSealer,
  type EnvelopeSealerProps,
  SEALING_FRAME_LENGTH,
} from '../../lambdas/adapters/envelope-sealer.js';
import { LocalKeyring } from '../../lambdas/adapters/local-keyring.js';
import { parseBlobV2 } from '../../lambdas/adapters/sealed-blob-v2.js';
import { CountersignError } from '../../lambdas/core/errors.js';
import type { Clock, SealPurpose } from '../../lambdas/core/ports.js';
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

class ManualClock implements Clock {
  private epochMs = Date.parse('2026-01-01T00:00:00Z');
  public now(): Date {
    return new Date(this.epochMs);
  }
  public advance(milliseconds: number): void {
    this.epochMs += milliseconds;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

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

  it('refuses a blob with any one byte flipped', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const sealed = await sealer.seal('run-state', 'run-3', encoder.encode('state to protect'));
    const positions = [
      0,
      3,
      4,
      10,
      100,
      Math.floor(sealed.length / 2),
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

  it('refuses truncated blobs, unknown versions and empty input', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const sealed = await sealer.seal('run-state', 'run-5', encoder.encode('state'));
    const otherVersion = Uint8Array.from(sealed);
    otherVersion[3] = 3;

    // Act + Assess
    await expectRefused(sealer.unseal('run-state', 'run-5', sealed.subarray(0, sealed.length - 1)));
    await expectRefused(sealer.unseal('run-state', 'run-5', sealed.subarray(0, 40)));
    await expectRefused(sealer.unseal('run-state', 'run-5', new Uint8Array(0)));
    expect((await expectRefused(sealer.unseal('run-state', 'run-5', otherVersion))).message).toContain(
      'version',
    );
  });

  it('seals in format 2 and refuses a blob relabelled as the other format either way', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const version1 = await harness.createSealer({ blobVersion: 1 });
    const sealed = await sealer.seal('run-state', 'run-5', encoder.encode('state'));
    const sealedVersion1 = await version1.seal('run-state', 'run-5', encoder.encode('state'));
    const downgraded = Uint8Array.from(sealed);
    downgraded[3] = 1;
    const upgraded = Uint8Array.from(sealedVersion1);
    upgraded[3] = 2;

    // Act + Assess
    expect([sealed[3], sealedVersion1[3]]).toEqual([2, 1]);
    expect(decoder.decode(await sealer.unseal('run-state', 'run-5', sealedVersion1))).toBe('state');
    await expectRefused(sealer.unseal('run-state', 'run-5', downgraded));
    await expectRefused(sealer.unseal('run-state', 'run-5', upgraded));
  });

  it('seals format 2 under a key first met in a format 1 blob, without another KMS call, and reads it cold', async () => {
    // Prepare
    const version1 = await harness.createSealer({ blobVersion: 1 });
    const oldState = await version1.seal('run-state', 'run-10', encoder.encode('old state'));
    const pausing = await harness.createSealer();
    const reading = await harness.createSealer();
    harness.counter.reset();

    // Act: a pause of a run whose state a format 1 container sealed
    await pausing.unseal('run-state', 'run-10', oldState);
    const card = await pausing.seal('approval-card', 'run-10', encoder.encode('card'));
    const afterPause = harness.counter.snapshot();
    const unsealed = await reading.unseal('approval-card', 'run-10', card);

    // Assess: the card is format 2 and names the Encryption SDK wrapping of its key
    expect([card[3], card[4]]).toEqual([2, 1]);
    expect(afterPause).toEqual({ 'KMS:Decrypt': 1 });
    expect(decoder.decode(unsealed)).toBe('card');
  });

  it('seals every blob under a fresh salt and nonce, so one plaintext never seals to the same bytes', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const plaintext = encoder.encode('the same state');

    // Act
    const sealed = await Promise.all(
      Array.from({ length: 50 }, () => sealer.seal('run-state', 'run-5', plaintext)),
    );

    // Assess
    const parsed = sealed.map((blob) => parseBlobV2(blob, { runId: 'run-5', purpose: 'run-state' }, 1024));
    const saltAndNonce = new Set(
      parsed.map((blob) =>
        'refused' in blob ? blob.refused : Buffer.concat([blob.salt, blob.nonce]).toString('hex'),
      ),
    );
    const ciphertexts = new Set(
      parsed.map((blob) => ('refused' in blob ? blob.refused : Buffer.from(blob.ciphertext).toString('hex'))),
    );
    expect(saltAndNonce.size).toBe(50);
    expect(ciphertexts.size).toBe(50);
  });

  it('refuses a format 2 blob whose header lies about its lengths, without calling KMS', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const other = await harness.createSealer();
    const sealed = await sealer.seal('run-state', 'run-5', encoder.encode('state'));
    const view = () => {
      const copy = Uint8Array.from(sealed);
      return { copy, data: new DataView(copy.buffer) };
    };
    const wrappedLength = new DataView(sealed.buffer, sealed.byteOffset).getUint32(5);
    const runIdLengthOffset = 9 + wrappedLength;
    const hugeWrappedKey = view();
    hugeWrappedKey.data.setUint32(5, 0xffffffff);
    const zeroWrappedKey = view();
    zeroWrappedKey.data.setUint32(5, 0);
    const unknownWrapping = view();
    unknownWrapping.data.setUint8(4, 3);
    const longRunId = view();
    longRunId.data.setUint16(runIdLengthOffset, 0xffff);
    const bodyLengthOffset =
      runIdLengthOffset + 2 + 'run-5'.length + 2 + 'run-state'.length + 2 + 'brotli'.length;
    const hugeBody = view();
    hugeBody.data.setUint32(bodyLengthOffset, 0xffffffff);
    const shorterBody = view();
    shorterBody.data.setUint32(bodyLengthOffset, shorterBody.data.getUint32(bodyLengthOffset) - 1);
    harness.counter.reset();

    // Act + Assess
    for (const forged of [
      hugeWrappedKey,
      zeroWrappedKey,
      unknownWrapping,
      longRunId,
      hugeBody,
      shorterBody,
    ]) {
      await expectRefused(other.unseal('run-state', 'run-5', forged.copy));
    }
    await expectRefused(other.unseal('run-state', 'run-6', sealed));
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
    await sealer.seal('approval-card', 'run-6', encoder.encode('card'));
    await sealer.seal('task-token', 'run-6', encoder.encode('token'));

    // Assess
    expect(afterUnseal).toEqual({ 'KMS:Decrypt': 1 });
    expect(harness.counter.snapshot()).toEqual({ 'KMS:Decrypt': 1 });
    const after = harness.serviceCounts();
    if (before && after) expect((after.Decrypt ?? 0) - (before.Decrypt ?? 0)).toBe(1);
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
    const clock = new ManualClock();
    const sealer = await harness.createSealer({
      maxBlobsPerSealingKey: 2,
      sealingKeyLifetimeMs: 60_000,
      clock,
    });

    // Act
    for (let index = 0; index < 5; index += 1) await sealer.seal('run-state', 'run-7', encoder.encode('x'));
    const afterBlobBound = harness.counter.snapshot();
    clock.advance(60_000);
    await sealer.seal('run-state', 'run-7', encoder.encode('x'));

    // Assess
    expect(afterBlobBound).toEqual({ 'KMS:GenerateDataKey': 3 });
    expect(harness.counter.snapshot()).toEqual({ 'KMS:GenerateDataKey': 4 });
  });

  it('forgets unwrapped keys after their cache lifetime and beyond the cache size', async () => {
    // Prepare
    const clock = new ManualClock();
    const sealing = await harness.createSealer({ maxBlobsPerSealingKey: 1 });
    const [first, second, third] = await Promise.all(
      ['first', 'second', 'third'].map((text) => sealing.seal('run-state', 'run-8', encoder.encode(text))),
    );
    const reading = await harness.createSealer({ maxCachedKeys: 1, cachedKeyLifetimeMs: 1000, clock });
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
    clock.advance(1000);
    await unseal(first);

    // Assess
    expect(cached).toEqual({ 'KMS:Decrypt': 1 });
    // The first key became this container's sealing key, so eviction does not make it cost again.
    expect(currentKept).toEqual({ 'KMS:Decrypt': 3 });
    expect(evicted).toEqual({ 'KMS:Decrypt': 4 });
    expect(harness.counter.snapshot()).toEqual({ 'KMS:Decrypt': 5 });
  });

  it('round-trips a 2 MB incompressible state', async () => {
    // Prepare
    const sealer = await harness.createSealer();
    const plaintext = new Uint8Array(2 * 1024 * 1024);
    for (let offset = 0; offset < plaintext.length; offset += 65_536) {
      crypto.getRandomValues(plaintext.subarray(offset, offset + 65_536));
    }

    // Act
    const sealed = await sealer.seal('run-state', 'run-9', plaintext);
    const unsealed = await sealer.unseal('run-state', 'run-9', sealed);

    // Assess
    expect(Buffer.from(unsealed).equals(Buffer.from(plaintext))).toBe(true);
  });
});

describe('EnvelopeSealer and blobs already stored', () => {
  it('unseals a blob sealed with the old 4 KiB frames (the frame length is in each message header)', async () => {
    // Prepare: the fixture's master key in a fresh directory, as a container would hold it
    const fixtures = resolveProjectPath('test/fixtures/sealed-blobs');
    const directory = await mkdtemp(join(tmpdir(), 'countersign-old-frames-'));
    await copyFile(join(fixtures, 'master-key.bin'), join(directory, 'master-key.bin'));
    const sealer = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(directory).keyWrapping() });
    const sealed = new Uint8Array(await readFile(join(fixtures, 'frame-4096.blob')));

    try {
      // Act
      const plaintext = await sealer.unseal('run-state', 'run-fixture', sealed);

      // Assess
      expect(createHash('sha256').update(plaintext).digest('hex')).toBe(
        'e54a00cfada1cf051c018b7e829efefc396eaa2003bf5f463816065610995735',
      );
      await expect(sealer.unseal('run-state', 'run-other', sealed)).rejects.toMatchObject({
        code: 'sealed-state-rejected',
      });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('compresses a compressible state and leaves an incompressible one uncompressed, both unsealing', async () => {
    // Prepare
    const directory = await mkdtemp(join(tmpdir(), 'countersign-encoding-'));
    const sealer = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(directory).keyWrapping() });
    const json = new TextEncoder().encode(
      JSON.stringify(Array.from({ length: 5000 }, (_, index) => ({ index, tool: 'get_page', ok: true }))),
    );
    const random = new Uint8Array(randomBytes(200_000));

    try {
      // Act
      const sealedJson = await sealer.seal('run-state', 'run-1', json);
      const sealedRandom = await sealer.seal('run-state', 'run-1', random);

      // Assess
      expect(sealedJson.byteLength).toBeLessThan(json.byteLength / 5);
      expect(sealedRandom.byteLength).toBeLessThan(random.byteLength + 2_000);
      expect(Buffer.from(await sealer.unseal('run-state', 'run-1', sealedJson)).equals(json)).toBe(true);
      expect(Buffer.from(await sealer.unseal('run-state', 'run-1', sealedRandom)).equals(random)).toBe(true);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('unseals across frame lengths both ways: 4 KiB frames read by the default, 1 MiB read by a 4 KiB sealer', async () => {
    // Prepare
    const directory = await mkdtemp(join(tmpdir(), 'countersign-frames-'));
    const keyWrapping = await new LocalKeyring(directory).keyWrapping();
    const current = new EnvelopeSealer({ keyWrapping });
    const old = new EnvelopeSealer({ keyWrapping, frameLength: 4096 });
    const plaintext = new Uint8Array(3 * 1024 * 1024);
    for (let offset = 0; offset < plaintext.length; offset += 65_536) {
      crypto.getRandomValues(plaintext.subarray(offset, offset + 65_536));
    }

    try {
      // Act
      const byOld = await current.unseal(
        'run-state',
        'run-1',
        await old.seal('run-state', 'run-1', plaintext),
      );
      const byCurrent = await old.unseal(
        'run-state',
        'run-2',
        await current.seal('run-state', 'run-2', plaintext),
      );

      // Assess
      expect(SEALING_FRAME_LENGTH).toBe(1024 * 1024);
      expect(Buffer.from(byOld).equals(Buffer.from(plaintext))).toBe(true);
      expect(Buffer.from(byCurrent).equals(Buffer.from(plaintext))).toBe(true);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('EnvelopeSealer and the format 2 fixtures', () => {
  const fixtures = resolveProjectPath('test/fixtures/sealed-blobs');
  let directory: string;
  let sealer: EnvelopeSealer;
  const fixture = async (name: string) => new Uint8Array(await readFile(join(fixtures, name)));

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'countersign-v2-fixtures-'));
    await copyFile(join(fixtures, 'master-key.bin'), join(directory, 'master-key.bin'));
    sealer = new EnvelopeSealer({ keyWrapping: await new LocalKeyring(directory).keyWrapping() });
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('unseals the stored format 2 blob, and only for its run and purpose', async () => {
    // Prepare
    const sealed = await fixture('v2.blob');

    // Act
    const plaintext = await sealer.unseal('run-state', 'run-fixture', sealed);

    // Assess
    expect(createHash('sha256').update(plaintext).digest('hex')).toBe(
      '16df2bdfa8fdd6bf605c2b84d3f7aff57ba20c08cc2fcb67d4fe707744e3a0f3',
    );
    expect((await expectRefused(sealer.unseal('run-state', 'run-other', sealed))).message).toContain(
      'another run',
    );
    expect((await expectRefused(sealer.unseal('approval-card', 'run-fixture', sealed))).message).toContain(
      'another purpose',
    );
  });

  it.each([
    { name: 'v2-truncated.blob', runId: 'run-fixture', reason: 'truncated' },
    { name: 'v2-extended.blob', runId: 'run-fixture', reason: 'unknown format' },
    { name: 'v2-future-version.blob', runId: 'run-fixture', reason: 'unknown version' },
    { name: 'v2-wrong-commitment.blob', runId: 'run-fixture', reason: 'key commitment' },
    { name: 'v2-wrong-context.blob', runId: 'run-fixturx', reason: 'key commitment' },
    { name: 'v2-wrong-context.blob', runId: 'run-fixture', reason: 'another run' },
    { name: 'v2-labelled-v1.blob', runId: 'run-fixture', reason: '' },
    { name: 'v1-labelled-v2.blob', runId: 'run-fixture', reason: '' },
  ])('refuses $name read for $runId ($reason)', async ({ name, runId, reason }) => {
    // Prepare
    const sealed = await fixture(name);

    // Act
    const refusal = await expectRefused(sealer.unseal('run-state', runId, sealed));

    // Assess
    expect(refusal.message).toContain(reason);
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

      // Act + Assess
      await expectRefused(sealerB.unseal('run-state', 'run-1', sealed));
    } finally {
      await rm(directoryA, { recursive: true, force: true });
      await rm(directoryB, { recursive: true, force: true });
    }
  });
});
