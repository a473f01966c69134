import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { surfaceTransientFaults } from '../adapters/aws-faults.js';
import { ensureTable } from '../adapters/dynamo/create-table.js';

type DynaliteFactory = (options: {
  path?: string;
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}) => Server;

const dynalite = createRequire(import.meta.url)('dynalite') as DynaliteFactory;

export interface LocalDynamo {
  readonly client: DynamoDBClient;
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  stop(): Promise<void>;
}

/**
 * dynalite in this process on 127.0.0.1, its data on disk under `path` (so a restart loses
 * nothing), with the countersign table created. dynalite has no TransactWriteItems and no
 * TTL; countersign uses neither.
 */
export async function startLocalDynamo(options: { path?: string; tableName: string }): Promise<LocalDynamo> {
  const server = dynalite({
    ...(options.path ? { path: options.path } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  // Transient faults surface as deployed: `unavailable` once the SDK's retries are spent.
  const client = surfaceTransientFaults(
    new DynamoDBClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  const documentClient = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
  await ensureTable(client, options.tableName);
  return {
    client,
    documentClient,
    tableName: options.tableName,
    stop: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
