import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CountersignCliIo, runCountersignCli } from '../../bin/countersign-cli.js';
import { fetchReceiptPublicKey } from '../../lambdas/adapters/kms-receipt-public-key.js';
import { KmsReceiptSigner } from '../../lambdas/adapters/kms-receipt-signer.js';
import { InMemoryReceiptChainStore } from '../../lambdas/adapters/memory/in-memory-receipt-chain-store.js';
import { type FakeKmsServer, startFakeKmsServer } from '../support/fake-kms-server.js';
import {
  createChainDependencies,
  readSampleReceipt,
  recordSampleChain,
  steppingClock,
} from '../support/receipt-chains.js';

describe('countersign verify (bin/countersign-cli.ts)', () => {
  let folder: string;
  let kms: FakeKmsServer;
  let client: KMSClient;
  let output: { out: string[]; err: string[] };
  let io: CountersignCliIo;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'countersign-verify-'));
    const dependencies = await createChainDependencies();
    await recordSampleChain(dependencies, 'run-1', 'cancel');
    const receipt = await readSampleReceipt(dependencies.chain, 'run-1');
    await writeFile(join(folder, 'receipt.json'), JSON.stringify(receipt));
    const reordered = {
      ...receipt,
      entries: [receipt.entries[1], receipt.entries[0], ...receipt.entries.slice(2)],
    };
    await writeFile(join(folder, 'reordered.json'), JSON.stringify(reordered));
    await writeFile(join(folder, 'key.pem'), dependencies.pem);
    await writeFile(join(folder, 'not-json.json'), '{');

    kms = await startFakeKmsServer();
    client = new KMSClient({
      region: kms.region,
      endpoint: kms.endpoint,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const signed = new InMemoryReceiptChainStore();
    const signer = new KmsReceiptSigner({ client, keyArn: kms.signingKeyArn });
    await recordSampleChain({ chain: signed, signer, clock: steppingClock() }, 'run-2', 'reject');
    await writeFile(
      join(folder, 'kms-receipt.json'),
      JSON.stringify(await readSampleReceipt(signed, 'run-2')),
    );
  });

  afterAll(async () => {
    client.destroy();
    await kms.stop();
  });

  const run = async (...args: string[]): Promise<{ status: number; out: string; err: string }> => {
    output = { out: [], err: [] };
    io = {
      readFile: (path) => readFile(join(folder, path), 'utf8'),
      fetchKmsPublicKey: (keyId) => fetchReceiptPublicKey(client, keyId),
      print: (line) => output.out.push(line),
      printError: (line) => output.err.push(line),
    };
    const status = await runCountersignCli(args, io);
    return { status, out: output.out.join('\n'), err: output.err.join('\n') };
  };

  it('verifies a receipt against a PEM public key and lists its entries', async () => {
    // Act
    const answer = await run('verify', 'receipt.json', '--public-key', 'key.pem', '--run', 'run-1');

    // Assess
    expect(answer.status).toBe(0);
    expect(answer.out).toContain('VERIFIED: the receipt of run run-1: 4 entries, 3 signed.');
    expect(answer.out).toContain('turn 2  approve by bo (approvers: ana, bo)  signed');
    expect(answer.out).toContain('the last 1 entry is chained but not signed');
  });

  it('lists what a version 3 receipt says of each call: refusals, edits, and a choice that contradicts its decision', async () => {
    // Prepare: the version 3 fixtures, one run's chain (docs/receipts.md, "A worked verification")
    const fixture = (name: string) =>
      readFile(new URL(`../fixtures/chain-entry/${name}`, import.meta.url), 'utf8');
    const names = [
      'v3-edit.json',
      'v3-decision-per-call.json',
      'v3-approval-per-call.json',
      'v3-cancel.json',
    ];
    const entries = await Promise.all(names.map(async (name) => JSON.parse(await fixture(name))));
    const receipt = { format: 'countersign-receipt', formatVersion: 1, runId: 'run-fixture-v3', entries };
    const refusesAll = structuredClone(receipt);
    refusesAll.entries[1].choices[0].decision = 'reject';
    await writeFile(join(folder, 'v3.json'), JSON.stringify(receipt));
    await writeFile(join(folder, 'v3-refuses-all.json'), JSON.stringify(refusesAll));
    await writeFile(join(folder, 'v3-key.pem'), await fixture('v3-public-key.pem'));

    // Act
    const verified = await run('verify', 'v3.json', '--public-key', 'v3-key.pem');
    const refused = await run('verify', 'v3-refuses-all.json', '--public-key', 'v3-key.pem');

    // Assess
    expect(verified.status).toBe(0);
    expect(verified.out).toContain('turn 2  edit of call 0 by ana  signed');
    expect(verified.out).toContain('turn 3  approve refusing call 1 by bo (approvers: bo)  signed');
    expect(verified.out).toContain('turn 4  approval refusing call 1 by cy  signed');
    expect(refused.status).toBe(1);
    expect(refused.err).toBe(
      'NOT VERIFIED: the calls check failed at entry 1. Entry 1 is an approval that refuses every call.',
    );
  });

  it('verifies with the KMS key id (GetPublicKey), and refuses a receipt signed by another key id', async () => {
    // Act
    const byKms = await run('verify', 'kms-receipt.json', '--key-id', kms.signingKeyAlias);
    const localReceipt = await run('verify', 'receipt.json', '--key-id', kms.signingKeyArn);

    // Assess
    expect(byKms.status).toBe(0);
    expect(localReceipt).toMatchObject({
      status: 1,
      err: expect.stringContaining('the key check failed at entry 0'),
    });
  });

  it('names the check a reordered receipt fails, and the run a receipt of another run is of', async () => {
    // Act
    const reordered = await run('verify', 'reordered.json', '--public-key', 'key.pem');
    const otherRun = await run('verify', 'receipt.json', '--public-key', 'key.pem', '--run', 'run-9');
    const asJson = await run('verify', 'reordered.json', '--public-key', 'key.pem', '--json');

    // Assess
    expect(reordered).toMatchObject({
      status: 1,
      err: expect.stringContaining('the sequence check failed at entry 0'),
    });
    expect(otherRun).toMatchObject({
      status: 1,
      err: expect.stringContaining('is of run "run-1", not of run "run-9"'),
    });
    expect(JSON.parse(asJson.out)).toMatchObject({ kind: 'failed', check: 'sequence', entry: 0 });
  });

  it('says what is missing or unreadable, with exit status 2, and prints help on asking', async () => {
    // Act
    const answers = [];
    for (const args of [
      ['verify', 'receipt.json'],
      ['verify', 'receipt.json', '--public-key', 'key.pem', '--key-id', 'k'],
      ['verify', 'missing.json', '--public-key', 'key.pem'],
      ['verify', 'not-json.json', '--public-key', 'key.pem'],
      ['verify', 'receipt.json', '--public-key', 'receipt.json'],
      ['verify', 'receipt.json', '--key-id', kms.keyArn],
      ['sign', 'receipt.json'],
      ['verify', 'receipt.json', '--public-key', 'key.pem', '--colour'],
    ]) {
      answers.push(await run(...args));
    }
    const help = await run('--help');

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    expect(answers.map((answer) => answer.err.split('\n')[0])).toEqual([
      'Give the public key: --public-key <key.pem> or --key-id <KMS key>, one of the two.',
      'Give the public key: --public-key <key.pem> or --key-id <KMS key>, one of the two.',
      'Could not read missing.json: no such file.',
      'not-json.json is not JSON: a receipt is the body of GET /runs/{id}/receipt.',
      'Could not read the public key receipt.json: not a PEM public key.',
      expect.stringContaining(`Could not fetch the public key of KMS key "${kms.keyArn}"`),
      'Unknown command "sign".',
      expect.stringContaining("Unknown option '--colour'"),
    ]);
    expect(help).toMatchObject({ status: 0, out: expect.stringContaining('Usage: countersign verify') });
  });
});
