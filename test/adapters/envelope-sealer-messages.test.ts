import * as encryptionSdk from '@aws-crypto/client-node';
import { expect, it } from 'vitest';
import { SEALING_FRAME_LENGTH } from '../../lambdas/adapters/envelope-sealer.js';
import type { SealPurpose } from '../../lambdas/core/ports.js';
import {
  decoder,
  encoder,
  expectRefused,
  locateWrappedKey,
  testEveryKeyring,
} from './envelope-sealer-support.js';

testEveryKeyring((harness) => {
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
