import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, vi } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import {
  createKmsKeyWrapping,
  EnvelopeSealer,
  type EnvelopeSealerProps,
  type KeyWrapping,
} from '../../lambdas/adapters/envelope-sealer.js';
import { LocalKeyring } from '../../lambdas/adapters/local-keyring.js';
import { CountersignError } from '../../lambdas/core/errors.js';
import { type FakeKmsServer, startFakeKmsServer } from '../support/fake-kms-server.js';

type SealerOptions = Omit<EnvelopeSealerProps, 'keyWrapping' | 'callCounter'>;

/** One way of wrapping sealing keys; each `createSealer` is a fresh container (cold cache). */
export interface KeyringHarness {
  readonly counter: AwsCallCounter;
  createSealer(options?: SealerOptions): Promise<EnvelopeSealer>;
  /** What the key service itself saw, when there is one to ask. */
  serviceCounts(): Record<string, number> | undefined;
  close(): Promise<void>;
}

/**
 * A harness over one way of wrapping keys: each sealer it creates is a fresh container counting
 * its calls in the harness's counter (handed to the key wrapping too, which must not count twice).
 */
function harnessOver(
  wrapKeys: (counter: AwsCallCounter) => Promise<KeyWrapping>,
  service: Pick<KeyringHarness, 'serviceCounts' | 'close'>,
): KeyringHarness {
  const counter = new AwsCallCounter();
  return {
    counter,
    createSealer: async (options = {}) =>
      new EnvelopeSealer({ ...options, keyWrapping: await wrapKeys(counter), callCounter: counter }),
    ...service,
  };
}

async function startLocalHarness(): Promise<KeyringHarness> {
  const directory = await mkdtemp(join(tmpdir(), 'countersign-keyring-'));
  return harnessOver(() => new LocalKeyring(directory).keyWrapping(), {
    serviceCounts: () => undefined,
    close: () => rm(directory, { recursive: true, force: true }),
  });
}

async function startKmsHarness(): Promise<KeyringHarness> {
  const kms: FakeKmsServer = await startFakeKmsServer();
  const clientConfig = {
    endpoint: kms.endpoint,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  };
  return harnessOver(
    async (counter) => createKmsKeyWrapping({ keyArn: kms.keyArn, clientConfig, callCounter: counter }),
    { serviceCounts: () => kms.requestCounts(), close: () => kms.stop() },
  );
}

export const encoder = new TextEncoder();
export const decoder = new TextDecoder();
export const SEALING_KEY_CONTEXT = Buffer.from('countersign:sealing-key');

export async function expectRefused(promise: Promise<unknown>): Promise<CountersignError> {
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
export function locateWrappedKey(blob: Uint8Array): { offset: number; length: number } {
  const bytes = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  const keyAt = bytes.indexOf(SEALING_KEY_CONTEXT);
  expect(keyAt).toBeGreaterThan(0);
  const lengthAt = keyAt + SEALING_KEY_CONTEXT.byteLength;
  return { offset: lengthAt + 2, length: bytes.readUInt16BE(lengthAt) };
}

/**
 * The cases run against each way of wrapping sealing keys, the call counter reset before each.
 * The harness the cases are handed is filled in `beforeAll`, so a case reads it only while it runs.
 */
export function testEveryKeyring(cases: (harness: KeyringHarness) => void): void {
  describe.each([
    { name: 'local keyring', start: startLocalHarness },
    { name: 'KMS keyring (fake KMS)', start: startKmsHarness },
  ])('EnvelopeSealer with the $name', ({ start }) => {
    const harness = {} as KeyringHarness;
    beforeAll(async () => {
      Object.assign(harness, await start());
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
    cases(harness);
  });
}
