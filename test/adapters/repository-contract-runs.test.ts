import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { makeStoredRun } from '../support/stored-run-fixtures.js';
import { errorOf, listAllFiles, testEveryRunRepository } from './repository-contract-support.js';

testEveryRunRepository('runs', (adapters) => {
  it('stores a run with its sealed state and reads it back', async () => {
    // Prepare
    const record = makeStoredRun('run-create', { pendingToolNames: ['get_page'] });

    // Act
    await adapters.runs.createRun(record, Uint8Array.from([9, 8, 7]));
    const stored = await adapters.runs.getRun('run-create');

    // Assess
    expect(stored?.record).toEqual(record);
    expect(Array.from(stored?.sealedState ?? [])).toEqual([9, 8, 7]);
    expect(await adapters.runs.getRun('run-missing')).toBeUndefined();
  });

  it('refuses to create a run twice', async () => {
    // Prepare
    await adapters.runs.createRun(makeStoredRun('run-twice'), Uint8Array.from([1]));

    // Act
    const error = await errorOf(adapters.runs.createRun(makeStoredRun('run-twice'), Uint8Array.from([2])));

    // Assess
    expect(error.code).toBe('conflict');
    expect(Array.from((await adapters.runs.getRun('run-twice'))?.sealedState ?? [])).toEqual([1]);
  });

  it('updates a run only while it is in an expected status', async () => {
    // Prepare
    await adapters.runs.createRun(
      makeStoredRun('run-update', { status: 'waiting', pausedAt: '2026-03-01T10:05:00.000Z' }),
      Uint8Array.from([1]),
    );

    // Act
    const refused = await adapters.runs.updateRun(
      'run-update',
      { status: 'completed' },
      { expectStatus: ['running'], sealedState: Uint8Array.from([2]) },
    );
    const afterRefusal = await adapters.runs.getRun('run-update');
    const written = await adapters.runs.updateRun(
      'run-update',
      { status: 'running', turn: 4, policy: { fourEyes: false, revealRejectionReason: true } },
      {
        expectStatus: ['waiting', 'running'],
        sealedState: Uint8Array.from([3]),
        removeFields: ['pausedAt'],
      },
    );
    const afterWrite = await adapters.runs.getRun('run-update');

    // Assess
    expect(refused).toEqual({ kind: 'condition-failed' });
    expect(afterRefusal?.record.status).toBe('waiting');
    expect(Array.from(afterRefusal?.sealedState ?? [])).toEqual([1]);
    expect(written).toEqual({ kind: 'written' });
    expect(afterWrite?.record).toEqual(
      makeStoredRun('run-update', {
        status: 'running',
        turn: 4,
        policy: { fourEyes: false, revealRejectionReason: true },
      }),
    );
    expect(Array.from(afterWrite?.sealedState ?? [])).toEqual([3]);
  });

  it('does not create a run by updating one that does not exist', async () => {
    // Act
    const outcome = await adapters.runs.updateRun('run-ghost', { status: 'failed' });

    // Assess
    expect(outcome).toEqual({ kind: 'condition-failed' });
    expect(await adapters.runs.getRun('run-ghost')).toBeUndefined();
  });

  it('keeps a 2 MB incompressible sealed state outside the item and reads it back', async () => {
    // Prepare
    const large = new Uint8Array(randomBytes(2 * 1024 * 1024));
    const larger = new Uint8Array(randomBytes(2 * 1024 * 1024 + 1));

    // Act
    await adapters.runs.createRun(makeStoredRun('run-large'), large);
    const first = await adapters.runs.getRun('run-large');
    await adapters.runs.updateRun('run-large', { turn: 1 }, { sealedState: larger });
    const second = await adapters.runs.getRun('run-large');
    await adapters.runs.updateRun('run-large', { turn: 2 }, { sealedState: Uint8Array.from([5]) });
    const third = await adapters.runs.getRun('run-large');

    // Assess
    expect(Buffer.from(first?.sealedState ?? []).equals(Buffer.from(large))).toBe(true);
    expect(Buffer.from(second?.sealedState ?? []).equals(Buffer.from(larger))).toBe(true);
    expect(Array.from(third?.sealedState ?? [])).toEqual([5]);
    const blobs = await listAllFiles(adapters.blobDirectory);
    expect(blobs.some((path) => path.includes(join('runs', 'run-large', 'state')))).toBe(true);
  });

  it('refuses an overflowed sealed state whose blob was tampered with', async () => {
    // Prepare
    await adapters.runs.createRun(makeStoredRun('run-tampered'), new Uint8Array(randomBytes(400_000)));
    const [blobPath] = (await listAllFiles(adapters.blobDirectory)).filter((path) =>
      path.includes(join('runs', 'run-tampered')),
    );
    const bytes = await readFile(blobPath ?? '');
    bytes[1000] = (bytes[1000] ?? 0) ^ 0xff;
    await writeFile(blobPath ?? '', bytes);

    // Act
    const error = await errorOf(adapters.runs.getRun('run-tampered'));

    // Assess
    expect(error.code).toBe('sealed-state-rejected');
  });

  it('reads only the record of an overflowed run, without touching its blob', async () => {
    // Prepare: a run whose sealed state lives in the blob store, then the blob removed.
    await adapters.runs.createRun(makeStoredRun('run-record-only'), new Uint8Array(randomBytes(400_000)));
    for (const path of (await listAllFiles(adapters.blobDirectory)).filter((candidate) =>
      candidate.includes(join('runs', 'run-record-only')),
    )) {
      await writeFile(path, Buffer.alloc(0));
    }

    // Act
    const record = await adapters.runs.getRunRecord('run-record-only');

    // Assess
    expect(record?.runId).toBe('run-record-only');
    expect(await adapters.runs.getRunRecord('run-missing')).toBeUndefined();
  });

  it('refuses an oversized sealed state when there is nowhere to put it', async () => {
    // Act
    const error = await errorOf(
      adapters.runsWithoutBlobStore.createRun(makeStoredRun('run-nowhere'), new Uint8Array(300_001)),
    );

    // Assess
    expect(error.code).toBe('configuration');
    expect(await adapters.runs.getRun('run-nowhere')).toBeUndefined();
  });
  it('lets one of 20 concurrent creates and one of 20 concurrent status moves win', async () => {
    // Prepare
    await adapters.runs.createRun(makeStoredRun('run-moved', { status: 'waiting' }), Uint8Array.from([0]));

    // Act
    const creates = await Promise.allSettled(
      Array.from({ length: 20 }, (_, index) =>
        adapters.runs.createRun(makeStoredRun('run-created-once'), Uint8Array.from([index])),
      ),
    );
    const moves = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        adapters.runs.updateRun(
          'run-moved',
          { status: 'running', turn: index + 1 },
          { expectStatus: ['waiting'], sealedState: Uint8Array.from([index + 1]) },
        ),
      ),
    );

    // Assess: the record and the state are the winner's, whole.
    expect(creates.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const winners = moves.flatMap((outcome, index) => (outcome.kind === 'written' ? [index] : []));
    expect(winners).toHaveLength(1);
    const moved = await adapters.runs.getRun('run-moved');
    expect(moved?.record).toMatchObject({ status: 'running', turn: (winners[0] ?? -1) + 1 });
    expect(Array.from(moved?.sealedState ?? [])).toEqual([(winners[0] ?? -1) + 1]);
  });
});
