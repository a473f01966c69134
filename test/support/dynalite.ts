import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ensureTable } from '../../lambdas/adapters/dynamo/create-table.js';

/** dynalite ships no types; this is the part of its factory the tests use. */
type DynaliteFactory = (options: {
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
  path?: string;
}) => Server;

const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as DynaliteFactory;

/** A dynalite server in this process with the countersign table created. */
export interface RunningDynalite {
  readonly endpoint: string;
  readonly client: DynamoDBClient;
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  stop(): Promise<void>;
}

/**
 * Starts dynalite in memory on 127.0.0.1 (a random free port), creates the countersign
 * table with `ensureTable`, and returns clients pointed at it. Offline; no AWS account.
 *
 * @example
 * const dynamo = await startDynalite();
 * const runs = new DynamoRunRepository({ client: dynamo.documentClient, tableName: dynamo.tableName });
 * afterAll(() => dynamo.stop());
 */
export async function startDynalite(options: { tableName?: string } = {}): Promise<RunningDynalite> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 2,
  });
  const documentClient = DynamoDBDocumentClient.from(client);
  const tableName = options.tableName ?? `countersign-test-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, tableName);
  return {
    endpoint,
    client,
    documentClient,
    tableName,
    stop: async () => {
      client.destroy();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
