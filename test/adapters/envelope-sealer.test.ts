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
import { CountersignError } from '../../lambdas/core/errors.js';
import type { Clock, SealPurpose } from '../../lambdas/core/ports.js';
import { resolveProjectPath } from '../../lib/functions.js';
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
    otherVersion[3] = 2;

    // Act + Assess
    await expectRefused(sealer.unseal('run-state', 'run-5', sealed.subarray(0, sealed.length - 1)));
    await expectRefused(sealer.unseal('run-state', 'run-5', sealed.subarray(0, 40)));
    await expectRefused(sealer.unseal('run-state', 'run-5', new Uint8Array(0)));
    expect((await expectRefused(sealer.unseal('run-state', 'run-5', otherVersion))).message).toContain(
      'version',
    );
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
