import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import { FileBlobStore } from '../../lambdas/adapters/blob-store.js';
import { DynamoConfigurationRepository } from '../../lambdas/adapters/dynamo/configuration-repository.js';
import { DynamoPageStore } from '../../lambdas/adapters/dynamo/page-store.js';
import { DynamoRunRepository } from '../../lambdas/adapters/dynamo/run-repository.js';
import { DynamoUserDirectory } from '../../lambdas/adapters/dynamo/user-directory.js';
import { InMemoryRunRepository } from '../../lambdas/adapters/memory/in-memory-run-repository.js';
import {
  type CardShown,
  DECISION_RECORD_SCHEMA_VERSION,
  type DecisionClaim,
} from '../../lambdas/core/approvals/decision-record.js';
import type { StoredCard } from '../../lambdas/core/approvals/stored-card.js';
import { canonicalJson } from '../../lambdas/core/canonical-json.js';
import type { ConfigurationRepository } from '../../lambdas/core/configurations.js';
import { CountersignError } from '../../lambdas/core/errors.js';
import type { PageStore } from '../../lambdas/core/pages.js';
import type { Clock, RunRepository, UserDirectory } from '../../lambdas/core/ports.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';
import { makeStoredCard } from '../support/stored-run-fixtures.js';

/** A run repository under contract: the same cases run against every implementation. */
export interface RunRepositoryUnderContract {
  readonly runs: RunRepository;
  /** Same store, no blob store: an oversized state must be refused, not truncated. */
  readonly runsWithoutBlobStore: RunRepository;
  /** Where overflowing sealed state lands, for tampering with it. */
  readonly blobDirectory: string;
  close(): Promise<void>;
}

/** The DynamoDB adapter set: every port the persistence layer serves, on one table. */
export interface AdapterSet extends RunRepositoryUnderContract {
  readonly users: UserDirectory;
  readonly configurations: ConfigurationRepository;
  readonly pages: PageStore;
  readonly counter: AwsCallCounter;
  /** Writes an item as it is, key and all: copying or corrupting one as an attacker with table access would. */
  putRawItem(item: Record<string, unknown>): Promise<void>;
}

export const fixedClock: Clock = { now: () => new Date('2026-03-01T12:00:00.000Z') };

async function startDynamoAdapters(): Promise<AdapterSet> {
  const dynamo: RunningDynalite = await startDynalite();
  const blobDirectory = await mkdtemp(join(tmpdir(), 'countersign-blobs-'));
  const counter = new AwsCallCounter();
  counter.attachTo(dynamo.client);
  const props = { client: dynamo.documentClient, tableName: dynamo.tableName };
  return {
    runs: new DynamoRunRepository({ ...props, blobStore: new FileBlobStore(blobDirectory) }),
    runsWithoutBlobStore: new DynamoRunRepository(props),
    users: new DynamoUserDirectory(props),
    configurations: new DynamoConfigurationRepository(props),
    pages: new DynamoPageStore({ ...props, clock: fixedClock }),
    counter,
    blobDirectory,
    putRawItem: async (item) => {
      await dynamo.documentClient.send(new PutCommand({ TableName: dynamo.tableName, Item: item }));
    },
    close: async () => {
      await dynamo.stop();
      await rm(blobDirectory, { recursive: true, force: true });
    },
  };
}

/** The in-memory run repository, its overflow in a file blob store as the DynamoDB one's. */
async function startInMemoryRunRepository(): Promise<RunRepositoryUnderContract> {
  const blobDirectory = await mkdtemp(join(tmpdir(), 'countersign-blobs-'));
  return {
    runs: new InMemoryRunRepository({ blobStore: new FileBlobStore(blobDirectory) }),
    runsWithoutBlobStore: new InMemoryRunRepository(),
    blobDirectory,
    close: () => rm(blobDirectory, { recursive: true, force: true }),
  };
}

export function makeCard(runId: string, pausedAt: string, overrides: Partial<StoredCard> = {}): StoredCard {
  return makeStoredCard(runId, { pausedAt, ...overrides });
}

export function makeDecision(
  runId: string,
  decidedBy: string,
  overrides: Partial<DecisionClaim> = {},
): DecisionClaim {
  return {
    schemaVersion: DECISION_RECORD_SCHEMA_VERSION,
    channel: 'api',
    runId,
    turn: 3,
    decision: 'approve',
    digest: 'b'.repeat(64),
    decidedBy,
    decidedAt: '2026-03-01T11:00:00.000Z',
    claimId: `claim-${runId}-${decidedBy}`,
    cardShown: shownCard([{ tool: 'update_page_metadata', arguments: { title: 'x' }, preview: 'captured' }]),
    ...overrides,
  };
}

/** A decision record's `cardShown`, as `serializeCardShown` writes it. */
export function shownCard(calls: Array<Omit<CardShown['calls'][number], 'index'>>): string {
  return canonicalJson({ calls: calls.map((call, index) => ({ index, ...call })) });
}

export async function errorOf(promise: Promise<unknown>): Promise<CountersignError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CountersignError);
  return error as CountersignError;
}

export async function listAllFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** Every run repository the contract holds: the cases of each area run against each. */
const runRepositoriesUnderContract = [
  { name: 'DynamoRunRepository on dynalite', start: startDynamoAdapters },
  { name: 'InMemoryRunRepository', start: startInMemoryRunRepository },
];

/**
 * Starts the adapters before the cases and closes them after. The object the cases are handed
 * is filled in `beforeAll`, so a case reads it only while it runs.
 */
function withAdapters<Adapters extends { close(): Promise<void> }>(
  start: () => Promise<Adapters>,
  cases: (adapters: Adapters) => void,
): void {
  const adapters = {} as Adapters;
  beforeAll(async () => {
    Object.assign(adapters, await start());
  });
  afterAll(async () => {
    await adapters.close();
  });
  cases(adapters);
}

/** One area of the run repository contract, its cases run against every implementation. */
export function testEveryRunRepository(
  area: string,
  cases: (adapters: RunRepositoryUnderContract) => void,
): void {
  describe.each(runRepositoriesUnderContract)('run repository contract: $name', ({ start }) => {
    withAdapters(start, (adapters) => describe(area, () => cases(adapters)));
  });
}

/** One area of the ports only the DynamoDB adapters serve, on a table of its own. */
export function testDynamoAdapters(area: string, cases: (adapters: AdapterSet) => void): void {
  describe('persistence contract: DynamoDB adapters on dynalite', () => {
    withAdapters(startDynamoAdapters, (adapters) => describe(area, () => cases(adapters)));
  });
}
