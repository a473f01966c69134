// `countersign <command>`: the published package's command line (package.json `bin`), bundled
// into dist/cli/countersign.mjs by `npm run build`. Two commands: verify a receipt offline, and
// serve the MCP approval gateway (bin/mcp-gateway-command.ts).
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { ReceiptKey, ReceiptVerification } from '../lambdas/core/receipts/verify-receipt.js';
import { verifyReceipt } from '../lambdas/core/receipts/verify-receipt.js';
import { MCP_GATEWAY_USAGE, type McpGatewayCommandIo, runMcpGatewayCommand } from './mcp-gateway-command.js';

const USAGE = `Usage: countersign verify <receipt.json> --public-key <key.pem> [--run <run id>] [--json]
       countersign verify <receipt.json> --key-id <KMS key ARN, id or alias> [--region <region>] [--run <run id>] [--json]

Verifies a run's receipt (GET /runs/{id}/receipt) offline: its format, each entry's run, sequence and
link to the entry before it, each policy hash, and each signature (ECDSA P-256, SHA-256) against the
public key: a PEM file (SPKI), or the KMS key's, fetched with GetPublicKey (AWS default credentials).

  --run <run id>  the run the receipt must be of (a receipt of another run fails)
  --json          print the verification as JSON

Exit status: 0 verified, 1 not verified (the failed check is named), 2 the command could not run.
See docs/receipts.md.

${MCP_GATEWAY_USAGE}

See docs/external-agents.md.`;

export interface CountersignCliIo {
  readonly readFile: (path: string) => Promise<string>;
  /** The public key of a KMS key (`--key-id`): deployed, KMS GetPublicKey. */
  readonly fetchKmsPublicKey: (keyId: string, region: string | undefined) => Promise<Required<ReceiptKey>>;
  readonly print: (line: string) => void;
  readonly printError: (line: string) => void;
  /** `mcp-gateway` only: the process's environment and its stop signal. */
  readonly gateway?: Pick<McpGatewayCommandIo, 'environment' | 'untilStopped'>;
}

/** The process's own input and output, and KMS through the AWS SDK (loaded only for `--key-id`). */
export const PROCESS_IO: CountersignCliIo = {
  readFile: (path) => readFile(path, 'utf8'),
  fetchKmsPublicKey: async (keyId, region) => {
    const [{ KMSClient }, { fetchReceiptPublicKey }] = await Promise.all([
      import('@aws-sdk/client-kms'),
      import('../lambdas/adapters/kms-receipt-public-key.js'),
    ]);
    const client = new KMSClient(region === undefined ? {} : { region });
    try {
      return await fetchReceiptPublicKey(client, keyId);
    } finally {
      client.destroy();
    }
  },
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
  gateway: {
    environment: process.env,
    untilStopped: () =>
      new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      }),
  },
};

/**
 * Runs one command and returns the exit status (0 verified or the gateway stopped, 1 not verified,
 * 2 could not run).
 *
 * @example
 * process.exitCode = await runCountersignCli(['verify', 'receipt.json', '--public-key', 'key.pem'], PROCESS_IO);
 */
export async function runCountersignCli(args: readonly string[], io: CountersignCliIo): Promise<number> {
  if (args[0] === 'mcp-gateway') {
    if (io.gateway === undefined) {
      io.printError('mcp-gateway runs only as the countersign command.');
      return 2;
    }
    return runMcpGatewayCommand(args.slice(1), { ...io.gateway, print: io.print, printError: io.printError });
  }
  let parsed: ReturnType<typeof parseVerifyArguments>;
  try {
    parsed = parseVerifyArguments(args);
  } catch (error) {
    io.printError(error instanceof Error ? error.message : String(error));
    io.printError(USAGE);
    return 2;
  }
  if (parsed.kind === 'help') {
    io.print(USAGE);
    return 0;
  }
  const { receiptPath, values } = parsed;
  const receipt = await readReceipt(io, receiptPath);
  if (receipt.kind === 'unreadable') {
    io.printError(receipt.message);
    return 2;
  }
  const key = await readKey(io, values);
  if (key.kind === 'unreadable') {
    io.printError(key.message);
    return 2;
  }
  const verification = verifyReceipt(
    receipt.json,
    key.key,
    values.run === undefined ? {} : { runId: values.run },
  );
  if (values.json) io.print(JSON.stringify(verification, null, 2));
  else printVerification(io, verification);
  return verification.kind === 'verified' ? 0 : 1;
}

function parseVerifyArguments(args: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      'public-key': { type: 'string' },
      'key-id': { type: 'string' },
      region: { type: 'string' },
      run: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, receiptPath, ...extra] = positionals;
  if (values.help || command === 'help') return { kind: 'help' } as const;
  if (command !== 'verify') {
    throw new Error(command === undefined ? 'Name a command.' : `Unknown command "${command}".`);
  }
  if (receiptPath === undefined) throw new Error('Name the receipt file: countersign verify <receipt.json>.');
  if (extra.length > 0) throw new Error(`Unexpected argument "${extra[0]}".`);
  if ((values['public-key'] === undefined) === (values['key-id'] === undefined)) {
    throw new Error('Give the public key: --public-key <key.pem> or --key-id <KMS key>, one of the two.');
  }
  return { kind: 'verify', receiptPath, values } as const;
}

async function readReceipt(
  io: CountersignCliIo,
  path: string,
): Promise<{ kind: 'read'; json: unknown } | { kind: 'unreadable'; message: string }> {
  let text: string;
  try {
    text = await io.readFile(path);
  } catch (error) {
    return { kind: 'unreadable', message: `Could not read ${path}: ${formatFileError(error)}.` };
  }
  try {
    return { kind: 'read', json: JSON.parse(text) as unknown };
  } catch {
    return {
      kind: 'unreadable',
      message: `${path} is not JSON: a receipt is the body of GET /runs/{id}/receipt.`,
    };
  }
}

async function readKey(
  io: CountersignCliIo,
  values: { 'public-key'?: string | undefined; 'key-id'?: string | undefined; region?: string | undefined },
): Promise<{ kind: 'read'; key: ReceiptKey } | { kind: 'unreadable'; message: string }> {
  const keyId = values['key-id'];
  if (keyId !== undefined) {
    try {
      return { kind: 'read', key: await io.fetchKmsPublicKey(keyId, values.region ?? regionOfArn(keyId)) };
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return {
        kind: 'unreadable',
        message: `Could not fetch the public key of KMS key "${keyId}" (${reason}).`,
      };
    }
  }
  const path = values['public-key'] ?? '';
  let pem: string;
  try {
    pem = await io.readFile(path);
  } catch (error) {
    return {
      kind: 'unreadable',
      message: `Could not read the public key ${path}: ${formatFileError(error)}.`,
    };
  }
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey(pem);
  } catch {
    return { kind: 'unreadable', message: `Could not read the public key ${path}: not a PEM public key.` };
  }
  return { kind: 'read', key: { publicKey } };
}

function printVerification(io: CountersignCliIo, verification: ReceiptVerification): void {
  if (verification.kind === 'failed') {
    const where = verification.entry === undefined ? '' : ` at entry ${verification.entry}`;
    io.printError(`NOT VERIFIED: the ${verification.check} check failed${where}. ${verification.message}`);
    return;
  }
  const signed = verification.entries.filter((entry) => entry.signed).length;
  io.print(
    `VERIFIED: the receipt of run ${verification.runId}: ${verification.entries.length} entries, ${signed} signed.`,
  );
  for (const entry of verification.entries) {
    const who = entry.by === undefined ? '' : ` by ${entry.by}`;
    const approvers =
      entry.kind === 'decision' && entry.approvers !== undefined
        ? ` (approvers: ${entry.approvers.join(', ')})`
        : '';
    const calls =
      entry.refusedCalls !== undefined
        ? ` refusing ${formatCalls(entry.refusedCalls)}`
        : entry.editedCalls !== undefined
          ? ` of ${formatCalls(entry.editedCalls)}`
          : '';
    io.print(
      `  ${entry.sequence}  ${entry.at}  turn ${entry.turn}  ${entry.decision ?? entry.kind}${calls}${who}${approvers}${entry.signed ? '  signed' : ''}`,
    );
  }
  if (verification.unsignedTail > 0) {
    io.print(
      `Note: the last ${verification.unsignedTail} entr${verification.unsignedTail === 1 ? 'y is' : 'ies are'} chained but not signed (a cancel or an expiry); see docs/receipts.md.`,
    );
  }
}

/** `call 1`, `calls 0, 2`: the calls an entry names, by index. */
function formatCalls(indexes: readonly number[]): string {
  return `${indexes.length === 1 ? 'call' : 'calls'} ${indexes.join(', ')}`;
}

/** The region of a key ARN (`arn:aws:kms:<region>:…`); an id or alias uses the SDK's default region. */
function regionOfArn(keyId: string): string | undefined {
  const parts = keyId.split(':');
  return parts[0] === 'arn' && parts[2] === 'kms' && parts[3] ? parts[3] : undefined;
}

function isFileError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string';
}

function formatFileError(error: unknown): string {
  if (!isFileError(error)) return 'unreadable';
  if (error.code === 'ENOENT') return 'no such file';
  if (error.code === 'EACCES') return 'permission denied';
  return error.code ?? 'unreadable';
}
