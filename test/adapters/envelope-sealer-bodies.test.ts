import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvelopeSealer } from '../../lambdas/adapters/envelope-sealer.js';
import { LocalKeyring } from '../../lambdas/adapters/local-keyring.js';
import type { SealPurpose } from '../../lambdas/core/ports.js';
import { encoder } from './envelope-sealer-support.js';

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
