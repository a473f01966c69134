import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { surfaceTransientFaults } from '../adapters/aws-faults.js';
import { ensureTable } from '../adapters/dynamo/create-table.js';
import { createInProcessDynalite, IN_PROCESS_DYNALITE_ENDPOINT } from './in-process-dynalite.js';

export interface LocalDynamo {
  readonly client: DynamoDBClient;
  readonly documentClient: DynamoDBDocumentClient;
  readonly tableName: string;
  stop(): Promise<void>;
}

/**
 * dynalite inside this process, its data on disk under `path` (so a restart loses nothing),
 * with the countersign table created. It has no socket: the SDK client hands each request to
 * dynalite in-process (in-process-dynalite.ts), so no web page or other local user can read or
 * write the store around the admin API. dynalite has no TransactWriteItems and no TTL;
 * countersign uses neither.
 */
export async function startLocalDynamo(options: {
  path?: string;
  tableName: string;
  /** Create the table when it is missing; a reader (the policy replay) writes nothing. @default true */
  create?: boolean;
}): Promise<LocalDynamo> {
  const store = createInProcessDynalite({
    ...(options.path ? { path: options.path } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  // Transient faults surface as deployed: `unavailable` once the SDK's retries are spent.
  const client = surfaceTransientFaults(
    new DynamoDBClient({
      endpoint: IN_PROCESS_DYNALITE_ENDPOINT,
      region: 'local',
      requestHandler: store.requestHandler,
      // Never checked (nothing travels), but never a guessable constant either.
      credentials: {
        accessKeyId: randomBytes(10).toString('hex'),
        secretAccessKey: randomBytes(20).toString('base64url'),
      },
    }),
  );
  const documentClient = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
  if (options.create !== false) await ensureTable(client, options.tableName);
  return {
    client,
    documentClient,
    tableName: options.tableName,
    stop: async () => {
      client.destroy();
      await store.close();
    },
  };
}
