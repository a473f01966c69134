/**
 * The sealing part of `npm run bench`: what the envelope sealer (an Encryption SDK message per
 * blob) costs per blob, with raw `node:crypto` AES-256-GCM of the same bytes beside it for
 * scale, at 1 KB, 50 KB and 2 MB of incompressible state, seal and unseal, with the sealing key
 * already unwrapped (a warm container). Information only, no target: a KMS call costs ~25 ms
 * and a security product seals with a reviewed library. Samples of the sealer and of the
 * reference alternate, both in CPU time. `npx tsx bench/sealing-cost.ts` runs it alone.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  AlgorithmSuiteIdentifier,
  buildClient,
  CommitmentPolicy,
  RawAesKeyringNode,
  RawAesWrappingSuiteIdentifier,
} from '@aws-crypto/client-node';
import { EnvelopeSealer, SEALING_FRAME_LENGTH } from '../lambdas/adapters/envelope-sealer.js';
import { LocalKeyring } from '../lambdas/adapters/local-keyring.js';

const SIZES = [1_000, 50_000, 2_000_000] as const;
/** Frame lengths tried at 2 MB, to show why `SEALING_FRAME_LENGTH` is what it is. */
const FRAME_LENGTHS = [4 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024] as const;

export interface SealingRow {
  readonly operation: 'seal' | 'unseal';
  readonly bytes: number;
  readonly medianMs: number;
  readonly referenceMs: number;
  readonly ratio: number;
}

/** One Encryption SDK message of 1 KB under a raw AES keyring, by suite: why the sealer's has no signature. */
export interface SuiteRow {
  readonly suite: string;
  readonly sealMs: number;
  readonly unsealMs: number;
}

export interface FrameRow {
  readonly frameLength: number;
  /** Median seal plus unseal of 2 MB. */
  readonly medianMs: number;
}

async function cpuMilliseconds(work: () => unknown): Promise<number> {
  const started = process.cpuUsage();
  await work();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function rawSeal(key: Buffer, plaintext: Uint8Array): { iv: Buffer; ciphertext: Buffer; tag: Buffer } {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

function rawUnseal(key: Buffer, sealed: { iv: Buffer; ciphertext: Buffer; tag: Buffer }): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
}

/** The committing suite the sealer uses, and the same with the ECDSA P-384 signature. */
async function measureSuites(): Promise<SuiteRow[]> {
  const client = buildClient(CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT);
  const keyring = new RawAesKeyringNode({
    keyNamespace: 'bench',
    keyName: 'bench',
    unencryptedMasterKey: new Uint8Array(randomBytes(32)),
    wrappingSuite: RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
  });
  const plaintext = randomBytes(1_000);
  const rows: SuiteRow[] = [];
  for (const [suite, suiteId] of [
    [
      'AES_256_GCM_HKDF_SHA512_COMMIT_KEY (sealer)',
      AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY,
    ],
    ['... _ECDSA_P384', AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY_ECDSA_P384],
  ] as const) {
    const { result } = await client.encrypt(keyring, plaintext, { suiteId });
    const seal: number[] = [];
    const unseal: number[] = [];
    for (let sample = 0; sample < 51; sample += 1) {
      seal.push(await cpuMilliseconds(() => client.encrypt(keyring, plaintext, { suiteId })));
      unseal.push(await cpuMilliseconds(() => client.decrypt(keyring, result)));
    }
    rows.push({ suite, sealMs: median(seal), unsealMs: median(unseal) });
  }
  return rows;
}

/** Seal and unseal timings per size, the suites at 1 KB, and the frame-length sweep at 2 MB. */
export async function measureSealingCost(): Promise<{
  rows: SealingRow[];
  suites: SuiteRow[];
  frames: FrameRow[];
}> {
  const directory = await mkdtemp(join(tmpdir(), 'countersign-sealing-'));
  try {
    const keyWrapping = await new LocalKeyring(directory).keyWrapping();
    const sealer = new EnvelopeSealer({ keyWrapping });
    const key = randomBytes(32);
    const rows: SealingRow[] = [];
    for (const bytes of SIZES) {
      const plaintext = new Uint8Array(randomBytes(bytes));
      // Warm: the sealing key is generated and unwrapped once, as in a container's first blob.
      const sealed = await sealer.seal('run-state', 'bench-run', plaintext);
      await sealer.unseal('run-state', 'bench-run', sealed);
      const rawSealed = rawSeal(key, plaintext);
      // 101 at 2 MB: with 31, a garbage collection landing on a few samples moved the median (3.3x once).
      const samples = bytes >= 1_000_000 ? 101 : 201;
      const timings = {
        seal: [] as number[],
        unseal: [] as number[],
        rawSeal: [] as number[],
        rawUnseal: [] as number[],
      };
      for (let sample = 0; sample < samples; sample += 1) {
        timings.seal.push(await cpuMilliseconds(() => sealer.seal('run-state', 'bench-run', plaintext)));
        timings.rawSeal.push(await cpuMilliseconds(() => rawSeal(key, plaintext)));
        timings.unseal.push(await cpuMilliseconds(() => sealer.unseal('run-state', 'bench-run', sealed)));
        timings.rawUnseal.push(await cpuMilliseconds(() => rawUnseal(key, rawSealed)));
      }
      for (const operation of ['seal', 'unseal'] as const) {
        const medianMs = median(timings[operation]);
        const referenceMs = median(operation === 'seal' ? timings.rawSeal : timings.rawUnseal);
        rows.push({
          operation,
          bytes,
          medianMs,
          referenceMs,
          ratio: medianMs / referenceMs,
        });
      }
    }
    const frames: FrameRow[] = [];
    const large = new Uint8Array(randomBytes(2_000_000));
    for (const frameLength of FRAME_LENGTHS) {
      const framed = new EnvelopeSealer({ keyWrapping, frameLength });
      await framed.unseal('run-state', 'bench-run', await framed.seal('run-state', 'bench-run', large));
      const timings: number[] = [];
      for (let sample = 0; sample < 15; sample += 1) {
        timings.push(
          await cpuMilliseconds(async () =>
            framed.unseal('run-state', 'bench-run', await framed.seal('run-state', 'bench-run', large)),
          ),
        );
      }
      frames.push({ frameLength, medianMs: median(timings) });
    }
    return { rows, suites: await measureSuites(), frames };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

export function printSealingTable(result: {
  rows: readonly SealingRow[];
  suites: readonly SuiteRow[];
  frames: readonly FrameRow[];
}): void {
  console.log(
    '\nSealing cost: envelope sealer, one Encryption SDK message per blob (compression sample, committing suite, sealing key cached), raw node:crypto AES-256-GCM beside it for scale, incompressible bytes, CPU time; information only, no target',
  );
  console.log(
    `${'operation'.padEnd(30)}${'ms (this machine)'.padStart(19)}${'raw ms'.padStart(10)}${'x raw'.padStart(9)}`,
  );
  console.log('─'.repeat(70));
  for (const row of result.rows) {
    const size = row.bytes >= 1_000_000 ? `${row.bytes / 1_000_000} MB` : `${row.bytes / 1000} KB`;
    console.log(
      `${`${row.operation} ${size}`.padEnd(30)}${row.medianMs.toFixed(3).padStart(19)}${row.referenceMs.toFixed(3).padStart(10)}${row.ratio.toFixed(1).padStart(9)}`,
    );
  }
  console.log('By suite, one 1 KB message under a raw AES keyring, seal / unseal (ms, this machine):');
  for (const row of result.suites) {
    console.log(`  ${row.suite}: ${row.sealMs.toFixed(3)} / ${row.unsealMs.toFixed(3)}`);
  }
  console.log('By frame length, seal + unseal of 2 MB (ms, this machine):');
  console.log(
    `  ${result.frames
      .map(
        (frame) =>
          `${frame.frameLength >= 1024 * 1024 ? `${frame.frameLength / 1024 / 1024} MiB` : `${frame.frameLength / 1024} KiB`}${frame.frameLength === SEALING_FRAME_LENGTH ? ' (chosen)' : ''}: ${frame.medianMs.toFixed(2)}`,
      )
      .join(', ')}`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  printSealingTable(await measureSealingCost());
}
