import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnvelopeSealer } from '../../lambdas/adapters/envelope-sealer.js';
import { LocalKeyring } from '../../lambdas/adapters/local-keyring.js';
import { decoder, encoder, expectRefused } from './envelope-sealer-support.js';

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
