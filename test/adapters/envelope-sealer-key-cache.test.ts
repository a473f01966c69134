import { expect, it, vi } from 'vitest';
import { decoder, encoder, locateWrappedKey, testEveryKeyring } from './envelope-sealer-support.js';

testEveryKeyring((harness) => {
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
});
