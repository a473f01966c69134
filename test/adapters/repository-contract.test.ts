import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsCallCounter } from '../../lambdas/adapters/aws-call-counter.js';
import { FileBlobStore } from '../../lambdas/adapters/blob-store.js';
import { DynamoConfigurationRepository } from '../../lambdas/adapters/dynamo/configuration-repository.js';
import { DynamoPageStore } from '../../lambdas/adapters/dynamo/page-store.js';
import { DynamoRunRepository } from '../../lambdas/adapters/dynamo/run-repository.js';
import { DynamoUserDirectory } from '../../lambdas/adapters/dynamo/user-directory.js';
import { InMemoryRunRepository } from '../../lambdas/adapters/memory/in-memory-run-repository.js';
import {
  APPROVAL_RECORD_SCHEMA_VERSION,
  type ApprovalRecord,
  type CardShown,
  DECISION_RECORD_SCHEMA_VERSION,
  type DecisionClaim,
  readCardShown,
} from '../../lambdas/core/approvals/decision-record.js';
import { STORED_CARD_SCHEMA_VERSION, type StoredCard } from '../../lambdas/core/approvals/stored-card.js';
import { canonicalJson } from '../../lambdas/core/canonical-json.js';
import {
  type ConfigurationRepository,
  configurationSchema,
  taskSchema,
} from '../../lambdas/core/configurations.js';
import { CountersignError } from '../../lambdas/core/errors.js';
import { userProfileSchema } from '../../lambdas/core/identity.js';
import { PAGE_NOT_AVAILABLE, type PageStore, pageSchema } from '../../lambdas/core/pages.js';
import type { Clock, RunRepository, UserDirectory } from '../../lambdas/core/ports.js';
import { type RunningDynalite, startDynalite } from '../support/dynalite.js';
import { makeStoredCard, makeStoredRun } from '../support/stored-run-fixtures.js';

/** A run repository under contract: the same cases run against every implementation. */
interface RunRepositoryUnderContract {
  readonly runs: RunRepository;
  /** Same store, no blob store: an oversized state must be refused, not truncated. */
  readonly runsWithoutBlobStore: RunRepository;
  /** Where overflowing sealed state lands, for tampering with it. */
  readonly blobDirectory: string;
  close(): Promise<void>;
}

/** The DynamoDB adapter set: every port the persistence layer serves, on one table. */
interface AdapterSet extends RunRepositoryUnderContract {
  readonly users: UserDirectory;
  readonly configurations: ConfigurationRepository;
  readonly pages: PageStore;
  readonly counter: AwsCallCounter;
  /** Writes an item as it is, key and all: copying or corrupting one as an attacker with table access would. */
  putRawItem(item: Record<string, unknown>): Promise<void>;
  deleteRawItem(key: Record<string, string>): Promise<void>;
}

const fixedClock: Clock = { now: () => new Date('2026-03-01T12:00:00.000Z') };

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
    deleteRawItem: async (key) => {
      await dynamo.documentClient.send(new DeleteCommand({ TableName: dynamo.tableName, Key: key }));
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

function makeCard(runId: string, pausedAt: string, overrides: Partial<StoredCard> = {}): StoredCard {
  return makeStoredCard(runId, { pausedAt, ...overrides });
}

function makeDecision(
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
function shownCard(calls: Array<Omit<CardShown['calls'][number], 'index'>>): string {
  return canonicalJson({ calls: calls.map((call, index) => ({ index, ...call })) });
}

async function errorOf(promise: Promise<unknown>): Promise<CountersignError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CountersignError);
  return error as CountersignError;
}

async function listAllFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe.each([
  { name: 'DynamoRunRepository on dynalite', start: startDynamoAdapters },
  { name: 'InMemoryRunRepository', start: startInMemoryRunRepository },
])('run repository contract: $name', ({ start }) => {
  let adapters: RunRepositoryUnderContract;

  beforeAll(async () => {
    adapters = await start();
  });
  afterAll(async () => {
    await adapters.close();
  });
  describe('runs', () => {
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

  describe('cards and the inbox', () => {
    it('lists waiting cards newest first, page by page, and drops closed ones', async () => {
      // Prepare
      const pausedTimes = ['10:01', '10:05', '10:03', '10:04', '10:02'];
      for (const [index, time] of pausedTimes.entries()) {
        await adapters.runs.putCard(makeCard(`run-card-${index}`, `2026-03-01T${time}:00.000Z`));
      }
      await adapters.runs.closeCard('run-card-3', 'expired');

      // Act
      const seen: string[] = [];
      let cursor: string | undefined;
      let pagesRead = 0;
      do {
        const page = await adapters.runs.listWaitingCards(
          cursor === undefined ? { limit: 2 } : { limit: 2, cursor },
        );
        seen.push(...page.cards.map((card) => card.runId));
        for (const card of page.cards) expect(card.state).toBe('open');
        cursor = page.cursor;
        pagesRead += 1;
      } while (cursor !== undefined && pagesRead < 10);

      // Assess
      expect(seen).toEqual(['run-card-1', 'run-card-2', 'run-card-4', 'run-card-0']);
      const closed = await adapters.runs.getCard('run-card-3');
      expect(closed).toMatchObject({
        schemaVersion: STORED_CARD_SCHEMA_VERSION,
        state: 'closed',
        closedBecause: 'expired',
      });
      expect(Array.from(closed?.sealedToken ?? [])).toEqual([4, 5, 6]);
    });

    it('reads a card back as it was stored', async () => {
      // Prepare
      const card = makeCard('run-card-read', '2026-02-01T09:00:00.000Z', {
        toolNames: [],
        writeToolNames: [],
      });

      // Act
      await adapters.runs.putCard(card);

      // Assess
      expect(await adapters.runs.getCard('run-card-read')).toEqual(card);
      expect(await adapters.runs.getCard('run-card-none')).toBeUndefined();
      await expect(adapters.runs.closeCard('run-card-none', 'decided')).resolves.toEqual({
        kind: 'not-open',
      });
    });

    it('says which closing found the card open: its turn and groups once, then not again', async () => {
      // Prepare
      await adapters.runs.putCard(
        makeCard('run-card-close', '2026-03-01T10:00:00.000Z', { approverGroups: ['finance'] }),
      );

      // Act
      const closings = await Promise.all([
        adapters.runs.closeCard('run-card-close', 'decided'),
        adapters.runs.closeCard('run-card-close', 'cancelled'),
      ]);
      const again = await adapters.runs.closeCard('run-card-close', 'expired');

      // Assess: whatever the order, exactly one closing saw it open, and it names the turn
      const turn = makeCard('run-card-close', '2026-03-01T10:00:00.000Z').turn;
      expect(closings.filter((outcome) => outcome.kind === 'closed')).toEqual([
        { kind: 'closed', turn, approverGroups: ['finance'] },
      ]);
      expect(again).toEqual({ kind: 'not-open' });
    });

    it('lists to an approver only the cards routed to nobody in particular or to their groups', async () => {
      // Prepare
      await adapters.runs.putCard(makeCard('run-route-open', '2026-01-05T09:00:00.000Z'));
      await adapters.runs.putCard(
        makeCard('run-route-legal', '2026-01-05T09:01:00.000Z', { approverGroups: ['legal'] }),
      );
      await adapters.runs.putCard(
        makeCard('run-route-both', '2026-01-05T09:02:00.000Z', { approverGroups: ['legal', 'finance'] }),
      );
      await adapters.runs.putCard(
        makeCard('run-route-finance', '2026-01-05T09:03:00.000Z', { approverGroups: ['finance'] }),
      );
      const routedIds = (cards: readonly StoredCard[]) =>
        cards.map((card) => card.runId).filter((runId) => runId.startsWith('run-route-'));

      // Act
      const legal = await adapters.runs.listWaitingCards({
        limit: 100,
        routing: { kind: 'groups', groups: ['legal'] },
      });
      const nobody = await adapters.runs.listWaitingCards({
        limit: 100,
        routing: { kind: 'groups', groups: [] },
      });
      const every = await adapters.runs.listWaitingCards({ limit: 100, routing: { kind: 'every' } });

      // Assess: newest first, a card routed to two of the viewer's groups listed once.
      expect(routedIds(legal.cards)).toEqual(['run-route-both', 'run-route-legal', 'run-route-open']);
      expect(routedIds(nobody.cards)).toEqual(['run-route-open']);
      expect(routedIds(every.cards)).toEqual([
        'run-route-finance',
        'run-route-both',
        'run-route-legal',
        'run-route-open',
      ]);
    });

    it.each([
      ['not base64url', 'not a cursor!'],
      ['not JSON', Buffer.from('{"pk":').toString('base64url')],
      [
        'a key of another index',
        Buffer.from(JSON.stringify({ pk: 'PAGES', sk: 'PAGE#1' })).toString('base64url'),
      ],
      [
        'a key with a non-string attribute',
        Buffer.from(JSON.stringify({ pk: 'RUN#1', sk: 'CARD', inboxPk: 'WAITING', inboxSk: 7 })).toString(
          'base64url',
        ),
      ],
      [
        'a position that is not a card key',
        Buffer.from(JSON.stringify({ before: 'WAITING#@all#0' })).toString('base64url'),
      ],
      [
        'the index key the pre-sharding inbox used',
        Buffer.from(
          JSON.stringify({
            pk: 'RUN#1',
            sk: 'CARD',
            inboxPk: 'WAITING',
            inboxSk: '2026-01-01T00:00:00.000Z#1',
          }),
        ).toString('base64url'),
      ],
      ['too long', 'a'.repeat(5000)],
    ])('refuses a cursor that is %s as a bad request', async (_label, cursor) => {
      // Act
      const error = await errorOf(adapters.runs.listWaitingCards({ limit: 2, cursor }));

      // Assess
      expect(error.code).toBe('bad-request');
      expect(error.field).toBe('cursor');
    });

    it('refuses a page size that is not a positive integer', async () => {
      // Act
      const error = await errorOf(adapters.runs.listWaitingCards({ limit: 0 }));

      // Assess
      expect(error.code).toBe('bad-request');
      expect(error.field).toBe('limit');
    });
  });

  describe('decisions', () => {
    it('lets exactly one of 50 concurrent claims win and shows the others the winner', async () => {
      // Prepare
      const claims = Array.from({ length: 50 }, (_, index) =>
        makeDecision('run-race', `approver-${index}`, { decision: index % 2 === 0 ? 'approve' : 'reject' }),
      );

      // Act
      const outcomes = await Promise.all(claims.map((claim) => adapters.runs.claimDecision(claim)));

      // Assess
      const winners = outcomes.flatMap((outcome, index) =>
        outcome.kind === 'claimed' ? [claims[index]] : [],
      );
      expect(winners).toHaveLength(1);
      const stored = await adapters.runs.getDecision('run-race', 3);
      expect(stored).toEqual(winners[0]);
      for (const outcome of outcomes) {
        if (outcome.kind === 'already-decided') expect(outcome.existing).toEqual(stored);
      }
    });

    it('keeps one record per turn and never overwrites it', async () => {
      // Prepare
      const first = makeDecision('run-turns', 'alice', { turn: 1, reason: 'looks right' });
      const second = makeDecision('run-turns', 'bob', {
        turn: 2,
        decision: 'reject',
        cardShown: shownCard([{ tool: 'x', arguments: { kept: 1 }, preview: 'none' }]),
      });

      // Act
      const firstOutcome = await adapters.runs.claimDecision(first);
      const secondOutcome = await adapters.runs.claimDecision(second);
      const again = await adapters.runs.claimDecision({
        ...first,
        decidedBy: 'mallory',
        decision: 'reject',
      });

      // Assess
      expect(firstOutcome).toEqual({ kind: 'claimed' });
      expect(secondOutcome).toEqual({ kind: 'claimed' });
      expect(again).toEqual({ kind: 'already-decided', existing: first });
      expect(await adapters.runs.getDecision('run-turns', 2)).toEqual(second);
      expect(await adapters.runs.getDecision('run-turns', 9)).toBeUndefined();
    });

    it('keeps a card shown whatever JSON its arguments hold (issue #20)', async () => {
      // Prepare: what DynamoDB cannot hold as attributes: a number past 2^53 and past 1e125,
      // an empty key, a `constructor` key, a lone surrogate and 40 levels.
      let deep: unknown = 'bottom';
      for (let level = 0; level < 40; level += 1) deep = level % 2 === 0 ? [deep] : { '': deep };
      const shownArguments = {
        big: 2 ** 60,
        huge: 1e300,
        '': 'empty key',
        constructor: { prototype: 1 },
        text: 'x\uD800y',
        deep,
      };
      const record = makeDecision('run-any-json', 'alice', {
        cardShown: shownCard([{ tool: 'accept_anything', arguments: shownArguments, preview: 'none' }]),
      });

      // Act
      const claim = await adapters.runs.claimDecision(record);
      const stored = await adapters.runs.getDecision('run-any-json', record.turn);

      // Assess
      expect(claim).toEqual({ kind: 'claimed' });
      expect(stored).toEqual(record);
      expect(readCardShown(stored?.cardShown ?? '').calls[0]?.arguments).toEqual(
        JSON.parse(JSON.stringify(shownArguments)),
      );
    });

    it('tallies k-of-n approvals once per approver, only while the card waits at that turn and digest', async () => {
      // Prepare
      const card = makeCard('run-tally', '2026-03-01T10:00:00.000Z');
      await adapters.runs.putCard(card);
      const approval = (
        approvedBy: string,
        overrides: { digest?: string; turn?: number } = {},
      ): ApprovalRecord => ({
        schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
        channel: 'api',
        runId: 'run-tally',
        turn: overrides.turn ?? card.turn,
        digest: overrides.digest ?? card.digest,
        approvedBy,
        approvedAt: '2026-03-01T11:00:00.000Z',
      });

      // Act
      const first = await adapters.runs.recordApproval(approval('alice'));
      const repeated = await adapters.runs.recordApproval(approval('alice'));
      const second = await adapters.runs.recordApproval(approval('bob'));
      const staleDigest = await adapters.runs.recordApproval(approval('carol', { digest: 'c'.repeat(64) }));
      const otherTurn = await adapters.runs.recordApproval(approval('carol', { turn: card.turn + 1 }));
      const stored = await adapters.runs.getCard('run-tally');
      await adapters.runs.closeCard('run-tally', 'decided');
      const afterClose = await adapters.runs.recordApproval(approval('dave'));

      // Assess
      expect(first).toEqual({
        kind: 'recorded',
        approvedBy: ['alice'],
        delegatedApprovals: [],
        approvalContents: [],
      });
      expect(repeated).toEqual({
        kind: 'recorded',
        approvedBy: ['alice'],
        delegatedApprovals: [],
        approvalContents: [],
      });
      expect(second).toEqual({
        kind: 'recorded',
        approvedBy: ['alice', 'bob'],
        delegatedApprovals: [],
        approvalContents: [],
      });
      expect(staleDigest).toEqual({ kind: 'card-moved' });
      expect(otherTurn).toEqual({ kind: 'card-moved' });
      expect(afterClose).toEqual({ kind: 'card-moved' });
      expect(stored?.approvedBy).toEqual(['alice', 'bob']);
    });

    it('takes lapsed approvals out of the tally and names them, only while the card waits; approving again counts again', async () => {
      // Prepare
      const card = makeCard('run-lapse', '2026-03-01T10:00:00.000Z');
      await adapters.runs.putCard(card);
      const approval = (approvedBy: string): ApprovalRecord => ({
        schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
        channel: 'api',
        runId: 'run-lapse',
        turn: card.turn,
        digest: card.digest,
        approvedBy,
        approvedAt: '2026-03-01T11:00:00.000Z',
      });
      for (const approver of ['alice', 'bob', 'carol'])
        await adapters.runs.recordApproval(approval(approver));
      const at = { runId: 'run-lapse', turn: card.turn, digest: card.digest };

      // Act
      const lapsed = await adapters.runs.lapseApprovals({ ...at, approvers: ['alice', 'carol'] });
      const stored = await adapters.runs.getCard('run-lapse');
      const staleDigest = await adapters.runs.lapseApprovals({
        ...at,
        digest: 'c'.repeat(64),
        approvers: ['bob'],
      });
      const again = await adapters.runs.recordApproval(approval('alice'));
      await adapters.runs.putCard({
        ...(await adapters.runs.getCard('run-lapse')),
        sealedToken: Uint8Array.from([9]),
      } as StoredCard);
      const rewritten = await adapters.runs.getCard('run-lapse');
      await adapters.runs.closeCard('run-lapse', 'decided');
      const afterClose = await adapters.runs.lapseApprovals({ ...at, approvers: ['bob'] });

      // Assess
      expect(lapsed).toEqual({ kind: 'lapsed', approvedBy: ['bob'], lapsedApprovers: ['alice', 'carol'] });
      expect(stored).toMatchObject({ approvedBy: ['bob'], lapsedApprovers: ['alice', 'carol'] });
      expect(staleDigest).toEqual({ kind: 'card-moved' });
      expect(again).toEqual({
        kind: 'recorded',
        approvedBy: ['alice', 'bob'],
        delegatedApprovals: [],
        approvalContents: [],
      });
      expect(rewritten).toMatchObject({ approvedBy: ['alice', 'bob'], lapsedApprovers: ['alice', 'carol'] });
      expect(afterClose).toEqual({ kind: 'card-moved' });
    });

    it('keeps the tally when a card is written again (a re-entered wait)', async () => {
      // Prepare
      const card = makeCard('run-reentered', '2026-03-01T10:00:00.000Z');
      await adapters.runs.putCard(card);
      await adapters.runs.recordApproval({
        schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
        channel: 'api',
        runId: 'run-reentered',
        turn: card.turn,
        digest: card.digest,
        approvedBy: 'alice',
        approvedAt: '2026-03-01T11:00:00.000Z',
      });
      const existing = await adapters.runs.getCard('run-reentered');

      // Act
      await adapters.runs.putCard({ ...(existing as StoredCard), sealedToken: Uint8Array.from([9]) });

      // Assess
      expect((await adapters.runs.getCard('run-reentered'))?.approvedBy).toEqual(['alice']);
    });
  });

  describe('inbox filters and order', () => {
    it('lists closing soon first and narrows by configuration, tool, owner and routed group, a filtered page resuming where it stopped', async () => {
      // Prepare: six cards of one configuration among cards of another, paused in this order
      const times = ['09:01', '09:02', '09:03', '09:04', '09:05', '09:06'];
      for (const [index, time] of times.entries()) {
        await adapters.runs.putCard(
          makeCard(`run-filter-${index}`, `2026-02-01T${time}:00.000Z`, {
            configurationId: 'cfg-filter',
            owner: index % 2 === 0 ? 'even-owner' : 'odd-owner',
            toolNames: index < 3 ? ['update_page_metadata'] : ['close_ticket'],
            ...(index === 5 ? { approverGroups: ['finance'] } : {}),
          }),
        );
        await adapters.runs.putCard(
          makeCard(`run-other-${index}`, `2026-02-01T${time}:30.000Z`, { configurationId: 'cfg-other' }),
        );
      }
      const listAll = async (options: Omit<Parameters<RunRepository['listWaitingCards']>[0], 'limit'>) => {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let pages = 0; pages < 20; pages += 1) {
          const page = await adapters.runs.listWaitingCards({
            limit: 2,
            ...options,
            ...(cursor ? { cursor } : {}),
          });
          seen.push(...page.cards.map((card) => card.runId));
          cursor = page.cursor;
          if (cursor === undefined) break;
        }
        return seen;
      };

      // Act
      const closingSoon = await listAll({ order: 'deadline', filter: { configurationId: 'cfg-filter' } });
      const newest = await listAll({ filter: { configurationId: 'cfg-filter' } });
      const byTool = await listAll({ filter: { configurationId: 'cfg-filter', tool: 'close_ticket' } });
      const byOwner = await listAll({
        order: 'deadline',
        filter: { configurationId: 'cfg-filter', owner: 'odd-owner' },
      });
      const byGroup = await listAll({
        routing: { kind: 'groups', groups: ['finance'] },
        filter: { group: 'finance', configurationId: 'cfg-filter' },
      });
      const newestCursor = (await adapters.runs.listWaitingCards({ limit: 1 })).cursor ?? '';
      const crossed = await errorOf(
        adapters.runs.listWaitingCards({ limit: 1, order: 'deadline', cursor: newestCursor }),
      );

      // Assess
      const filtered = times.map((_time, index) => `run-filter-${index}`);
      expect(closingSoon).toEqual(filtered);
      expect(newest).toEqual([...filtered].reverse());
      expect(byTool).toEqual(['run-filter-5', 'run-filter-4', 'run-filter-3']);
      expect(byOwner).toEqual(['run-filter-1', 'run-filter-3', 'run-filter-5']);
      expect(byGroup).toEqual(['run-filter-5']);
      expect(crossed).toMatchObject({ code: 'bad-request', field: 'cursor' });
    });
  });

  describe('history', () => {
    it('keeps every decision and approval of a run, with its card, for the audit', async () => {
      // Prepare
      const card = makeCard('run-audit', '2026-03-01T10:00:00.000Z', { turn: 4 });
      await adapters.runs.putCard(card);
      const approval = (approvedBy: string, approvedAt: string): ApprovalRecord => ({
        schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
        channel: 'api',
        runId: 'run-audit',
        turn: 4,
        digest: card.digest,
        approvedBy,
        approvedAt,
      });
      await adapters.runs.recordApproval(approval('alice', '2026-03-01T10:05:00.000Z'));
      await adapters.runs.recordApproval(approval('bob', '2026-03-01T10:06:00.000Z'));
      await adapters.runs.claimDecision(makeDecision('run-audit', 'alice', { turn: 2, decision: 'reject' }));
      await adapters.runs.claimDecision(
        makeDecision('run-audit', 'bob', { turn: 4, digest: card.digest, approvedBy: ['alice', 'bob'] }),
      );

      // Act
      const trail = await adapters.runs.readAuditTrail('run-audit');
      const none = await adapters.runs.readAuditTrail('run-without-anything');

      // Assess
      expect(trail.card).toMatchObject({ runId: 'run-audit', turn: 4 });
      expect(trail.approvals.map((each) => each.approvedBy).sort()).toEqual(['alice', 'bob']);
      expect(trail.decisions.map((each) => [each.turn, each.decision]).sort()).toEqual([
        [2, 'reject'],
        [4, 'approve'],
      ]);
      expect(none).toEqual({ decisions: [], approvals: [] });
    });

    it('lists what a person decided and approved and the runs they started, newest first, paged', async () => {
      // Prepare
      for (const [index, createdAt] of ['10:01', '10:03', '10:02'].entries()) {
        await adapters.runs.createRun(
          makeStoredRun(`run-mine-${index}`, {
            owner: 'history-owner',
            label: `Mine ${index}`,
            createdAt: `2026-03-02T${createdAt}:00.000Z`,
          }),
          Uint8Array.from([1]),
        );
      }
      await adapters.runs.putCard(makeCard('run-mine-0', '2026-03-02T11:00:00.000Z'));
      await adapters.runs.recordApproval({
        schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
        channel: 'api',
        runId: 'run-mine-0',
        turn: 2,
        digest: 'a'.repeat(64),
        approvedBy: 'history-decider',
        approvedAt: '2026-03-02T11:01:00.000Z',
      });
      await adapters.runs.claimDecision(
        makeDecision('run-mine-1', 'history-decider', { decidedAt: '2026-03-02T11:02:00.000Z' }),
      );
      await adapters.runs.claimDecision(
        makeDecision('run-gone', 'history-decider', {
          decision: 'reject',
          decidedAt: '2026-03-02T11:03:00.000Z',
        }),
      );

      // Act
      const firstRuns = await adapters.runs.listRunsOwnedBy('history-owner', { limit: 2 });
      const restRuns = await adapters.runs.listRunsOwnedBy('history-owner', {
        limit: 2,
        cursor: firstRuns.cursor ?? '',
      });
      const acts = await adapters.runs.listActsOf('history-decider', { limit: 10 });
      const nobody = await adapters.runs.listActsOf('history-nobody', { limit: 10 });
      const forged = await errorOf(
        adapters.runs.listRunsOwnedBy('history-owner', { limit: 2, cursor: 'bm90IG91cnM' }),
      );

      // Assess
      expect(firstRuns.items.map((run) => run.runId)).toEqual(['run-mine-1', 'run-mine-2']);
      expect(firstRuns.items[0]).toEqual({
        runId: 'run-mine-1',
        label: 'Mine 1',
        status: 'running',
        configurationId: 'default',
        createdAt: '2026-03-02T10:03:00.000Z',
        updatedAt: '2026-03-01T10:00:00.000Z',
      });
      expect(restRuns).toEqual({ items: [expect.objectContaining({ runId: 'run-mine-0' })] });
      expect(acts.items).toEqual([
        {
          kind: 'decision',
          runId: 'run-gone',
          turn: 3,
          at: '2026-03-02T11:03:00.000Z',
          digest: 'b'.repeat(64),
          decision: 'reject',
        },
        {
          kind: 'decision',
          runId: 'run-mine-1',
          turn: 3,
          at: '2026-03-02T11:02:00.000Z',
          digest: 'b'.repeat(64),
          decision: 'approve',
          run: { label: 'Mine 1', status: 'running' },
        },
        {
          kind: 'approval',
          runId: 'run-mine-0',
          turn: 2,
          at: '2026-03-02T11:01:00.000Z',
          digest: 'a'.repeat(64),
          run: { label: 'Mine 0', status: 'running' },
        },
      ]);
      expect(acts.cursor).toBeUndefined();
      expect(nobody).toEqual({ items: [] });
      expect(forged).toMatchObject({ code: 'bad-request', field: 'cursor' });
    });
  });
});

describe('persistence contract: DynamoDB adapters on dynalite', () => {
  let adapters: AdapterSet;

  beforeAll(async () => {
    adapters = await startDynamoAdapters();
  });
  afterAll(async () => {
    await adapters.close();
  });

  describe('table items and call counts of the run repository', () => {
    it('reads a card item written before card version 2 as open, tallies it, and closes it as the current version', async () => {
      // Prepare: the item as version 1 wrote it (no schemaVersion, `waiting`, one inbox key).
      const {
        schemaVersion: _version,
        state: _state,
        ...plain
      } = makeCard('run-card-v1', '2026-02-04T09:00:00.000Z');
      await adapters.putRawItem({
        ...plain,
        state: 'waiting',
        pk: 'RUN#run-card-v1',
        sk: 'CARD',
        inboxPk: 'WAITING',
        inboxSk: `${plain.pausedAt}#run-card-v1`,
      });

      // Act
      const read = await adapters.runs.getCard('run-card-v1');
      const listed = await adapters.runs.listWaitingCards({ limit: 100 });
      const tally = await adapters.runs.recordApproval({
        schemaVersion: APPROVAL_RECORD_SCHEMA_VERSION,
        channel: 'api',
        runId: 'run-card-v1',
        turn: plain.turn,
        digest: plain.digest,
        approvedBy: 'alice',
        approvedAt: '2026-02-04T09:01:00.000Z',
      });
      const closing = await adapters.runs.closeCard('run-card-v1', 'cancelled');
      const closed = await adapters.runs.getCard('run-card-v1');

      // Assess
      expect(read).toMatchObject({ schemaVersion: STORED_CARD_SCHEMA_VERSION, state: 'open' });
      expect(listed.cards.map((card) => card.runId)).toContain('run-card-v1');
      expect(tally).toEqual({
        kind: 'recorded',
        approvedBy: ['alice'],
        delegatedApprovals: [],
        approvalContents: [],
      });
      expect(closing).toEqual({ kind: 'closed', turn: plain.turn, approverGroups: [] });
      expect(closed).toMatchObject({
        schemaVersion: STORED_CARD_SCHEMA_VERSION,
        state: 'closed',
        closedBecause: 'cancelled',
      });
    });

    it('reads a copied card and a copied run under the run id of the key they were read under', async () => {
      // Prepare: whole items of run-copy-source written under run-copy-target's key.
      const card = makeCard('run-copy-source', '2026-02-02T09:00:00.000Z');
      await adapters.runs.putCard(card);
      await adapters.runs.createRun(makeStoredRun('run-copy-source'), Uint8Array.from([7, 8, 9]));
      const { sealedCard, sealedToken, ...plain } = card;
      await adapters.putRawItem({
        ...plain,
        sealedCard,
        sealedToken,
        pk: 'RUN#run-copy-target',
        sk: 'CARD',
        inboxPk: 'WAITING',
        inboxSk: `${card.pausedAt}#run-copy-source`,
      });
      await adapters.putRawItem({
        ...makeStoredRun('run-copy-source'),
        sealedState: Uint8Array.from([7, 8, 9]),
        pk: 'RUN#run-copy-target',
        sk: 'RUN',
      });

      // Act
      const copiedCard = await adapters.runs.getCard('run-copy-target');
      const copiedRun = await adapters.runs.getRun('run-copy-target');
      const listed = await adapters.runs.listWaitingCards({ limit: 100 });

      // Assess: the id the sealer is asked to open them under is the key's, so it refuses them.
      expect(copiedCard?.runId).toBe('run-copy-target');
      expect(copiedRun?.record.runId).toBe('run-copy-target');
      expect((await adapters.runs.getRunRecord('run-copy-target'))?.runId).toBe('run-copy-target');
      expect(
        listed.cards.filter((entry) => entry.sealedCard.length === 3).map((entry) => entry.runId),
      ).toEqual(expect.arrayContaining(['run-copy-source', 'run-copy-target']));
    });

    it('lists a card item that does not parse as unreadable beside the others, and refuses it on a read', async () => {
      // Prepare
      await adapters.runs.putCard(makeCard('run-unreadable-ok', '2026-02-03T09:00:00.000Z'));
      await adapters.putRawItem({
        pk: 'RUN#run-unreadable',
        sk: 'CARD',
        inboxPk: 'WAITING',
        inboxSk: '2026-02-03T09:00:01.000Z#run-unreadable',
        runId: 'run-unreadable',
        state: 'waiting',
      });

      // Act
      const page = await adapters.runs.listWaitingCards({ limit: 100 });
      const error = await errorOf(adapters.runs.getCard('run-unreadable'));

      // Assess
      expect(page.unreadableRunIds).toEqual(['run-unreadable']);
      expect(page.cards.map((card) => card.runId)).toContain('run-unreadable-ok');
      expect(error.code).toBe('sealed-state-rejected');
    });

    it('reads a history page with one query of the history index (and one batch read of run labels), an audit with one query', async () => {
      // Prepare
      await adapters.runs.createRun(
        makeStoredRun('run-history-counted', { owner: 'counted-owner' }),
        Uint8Array.from([1]),
      );
      await adapters.runs.claimDecision(makeDecision('run-history-counted', 'counted-decider'));
      adapters.counter.reset();

      // Act
      await adapters.runs.listRunsOwnedBy('counted-owner', { limit: 20 });
      const runs = adapters.counter.snapshot();
      adapters.counter.reset();
      await adapters.runs.listActsOf('counted-decider', { limit: 20 });
      const acts = adapters.counter.snapshot();
      adapters.counter.reset();
      await adapters.runs.readAuditTrail('run-history-counted');
      const audit = adapters.counter.snapshot();

      // Assess
      expect(runs).toEqual({ 'DynamoDB:Query': 1 });
      expect(acts).toEqual({ 'DynamoDB:Query': 1, 'DynamoDB:BatchGetItem': 1 });
      expect(audit).toEqual({ 'DynamoDB:Query': 1 });
    });

    it('lists one page with one query per index shard and one batch read of the cards, whatever the groups and filters', async () => {
      // Prepare
      adapters.counter.reset();

      // Act: every card (4 shards of the every-card route, and the pre-sharding partition)
      await adapters.runs.listWaitingCards({ limit: 3 });
      const everyCard = adapters.counter.snapshot();
      adapters.counter.reset();
      // Approvers in one group and in ten: the 4 shards of the approvers' route, and the old partition
      await adapters.runs.listWaitingCards({ limit: 3, routing: { kind: 'groups', groups: ['a'] } });
      const oneGroup = adapters.counter.snapshot();
      adapters.counter.reset();
      const tenGroups = Array.from({ length: 10 }, (_unused, index) => `g${index}`);
      await adapters.runs.listWaitingCards({ limit: 3, routing: { kind: 'groups', groups: tenGroups } });
      const manyGroups = adapters.counter.snapshot();
      adapters.counter.reset();
      // Filtered and sorted by deadline: the filters are read as DynamoDB reads, no extra rounds
      await adapters.runs.listWaitingCards({
        limit: 3,
        order: 'deadline',
        routing: { kind: 'groups', groups: tenGroups },
        filter: { configurationId: 'cfg-none', tool: 'close_ticket', owner: 'nobody', group: 'g1' },
      });
      const filtered = adapters.counter.snapshot();

      // Assess
      expect(everyCard).toEqual({ 'DynamoDB:Query': 5 }); // the card items carry the every-card key
      expect(oneGroup['DynamoDB:Query']).toBe(5);
      expect(oneGroup['DynamoDB:BatchGetItem'] ?? 0).toBeLessThanOrEqual(1);
      expect(manyGroups).toEqual(oneGroup);
      // No entry matches: DynamoDB's filter left nothing to follow to a card
      expect(filtered).toEqual({ 'DynamoDB:Query': 5 });
    });
  });

  describe('users', () => {
    it('stores, reads and lists users with the schema defaults', async () => {
      // Prepare
      const alice = userProfileSchema.parse({
        userId: 'alice',
        grants: ['agent_approve'],
        pageAccess: ['home'],
      });
      const root = userProfileSchema.parse({
        userId: 'root',
        grants: ['admin'],
        pageAccess: '*',
        languageAccess: '*',
      });

      // Act
      await adapters.users.putUser(alice);
      await adapters.users.putUser(root);
      await adapters.users.putUser({ ...alice, displayName: 'Alice' });

      // Assess
      expect(await adapters.users.getUser('alice')).toEqual({ ...alice, displayName: 'Alice' });
      expect(await adapters.users.getUser('nobody')).toBeUndefined();
      const listed = await adapters.users.listUsers();
      expect(listed.map((user) => user.userId).sort()).toEqual(['alice', 'root']);
      expect(listed.find((user) => user.userId === 'root')).toEqual(root);
    });
  });

  describe('configurations and tasks', () => {
    it('stores, lists and deletes configurations and tasks', async () => {
      // Prepare
      const configuration = configurationSchema.parse({
        configurationId: 'default',
        label: 'Default',
        provider: 'scripted',
        model: 'demo',
        allowedTools: ['get_page'],
      });
      const task = taskSchema.parse({
        taskId: 'seo',
        label: 'SEO',
        configurationId: 'default',
        promptTemplate: 'Improve {{input}}',
      });

      // Act
      await adapters.configurations.putConfiguration(configuration);
      await adapters.configurations.putTask(task);
      const listedConfigurations = await adapters.configurations.listConfigurations();
      const listedTasks = await adapters.configurations.listTasks();
      const deleted = await adapters.configurations.deleteTask('seo');
      const deletedAgain = await adapters.configurations.deleteTask('seo');

      // Assess
      expect(await adapters.configurations.getConfiguration('default')).toEqual(configuration);
      expect(listedConfigurations).toEqual([configuration]);
      expect(listedTasks).toEqual([task]);
      expect(deleted).toBe(true);
      expect(deletedAgain).toBe(false);
      expect(await adapters.configurations.getTask('seo')).toBeUndefined();
      expect(await adapters.configurations.deleteConfiguration('default')).toBe(true);
      expect(await adapters.configurations.listConfigurations()).toEqual([]);
    });
  });

  describe('pages', () => {
    it('reads many pages in batches of 100 and skips the missing ones', async () => {
      // Prepare
      const ids = Array.from({ length: 150 }, (_, index) => `page-${String(index).padStart(3, '0')}`);
      for (const pageId of ids) await adapters.pages.putPage(pageSchema.parse({ pageId, language: 'en' }));
      adapters.counter.reset();

      // Act
      const found = await adapters.pages.getPages([...ids, 'page-missing', 'page-000']);

      // Assess
      expect(found.size).toBe(150);
      expect(found.get('page-149')?.pageId).toBe('page-149');
      expect(found.has('page-missing')).toBe(false);
      expect(adapters.counter.snapshot()).toEqual({ 'DynamoDB:BatchGetItem': 2 });
    });

    it('lists pages with a cursor and refuses a forged one', async () => {
      // Act
      const first = await adapters.pages.listPages({ limit: 100 });
      const second = await adapters.pages.listPages({ limit: 100, cursor: first.cursor ?? '' });
      const error = await errorOf(
        adapters.pages.listPages({
          limit: 10,
          cursor: Buffer.from(JSON.stringify({ pk: 'USERS', sk: 'USER#alice' })).toString('base64url'),
        }),
      );

      // Assess
      const ids = [...first.pages, ...second.pages].map((page) => page.pageId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.filter((id) => id.startsWith('page-')).length).toBe(150);
      expect(error.field).toBe('cursor');
    });

    it('sets absolute metadata values and stamps who and when', async () => {
      // Prepare
      await adapters.pages.putPage(
        pageSchema.parse({ pageId: 'home', language: 'en', title: 'Old', body: 'Welcome' }),
      );

      // Act
      const written = await adapters.pages.updateMetadata(
        'home',
        { title: 'New', keywords: 'a, b' },
        'alice',
      );

      // Assess
      expect(written).toEqual(
        pageSchema.parse({
          pageId: 'home',
          language: 'en',
          title: 'New',
          keywords: 'a, b',
          body: 'Welcome',
          updatedAt: '2026-03-01T12:00:00.000Z',
          updatedBy: 'alice',
        }),
      );
      expect(await adapters.pages.getPage('home')).toEqual(written);
    });

    it('leaves every field the patch does not name as it was', async () => {
      // Prepare
      const page = pageSchema.parse({
        pageId: 'full',
        language: 'en',
        title: 'Title',
        description: 'Hand-written description',
        keywords: 'k1, k2',
        author: 'Ann',
        ogTitle: 'OG title',
        ogDescription: 'OG description',
      });
      await adapters.pages.putPage(page);

      // Act
      const written = await adapters.pages.updateMetadata('full', { description: 'New' }, 'alice');

      // Assess
      expect(written).toMatchObject({
        ...page,
        description: 'New',
        updatedBy: 'alice',
        updatedAt: expect.any(String),
      });
    });

    it('answers a missing page with the neutral text and refuses fields it may not set', async () => {
      // Act
      const missing = await errorOf(adapters.pages.updateMetadata('nowhere', { title: 'x' }, 'alice'));
      const forbidden = await errorOf(
        adapters.pages.updateMetadata('home', { body: 'x' } as unknown as { title: string }, 'alice'),
      );

      // Assess
      expect(missing.code).toBe('not-found');
      expect(missing.message).toBe(PAGE_NOT_AVAILABLE);
      expect(await adapters.pages.getPage('nowhere')).toBeUndefined();
      expect(forbidden.code).toBe('bad-request');
      expect((await adapters.pages.getPage('home'))?.body).toBe('Welcome');
    });
  });

  describe('call counting', () => {
    it('counts DynamoDB calls by operation through the client middleware', async () => {
      // Prepare
      await adapters.runs.createRun(makeStoredRun('run-counted'), Uint8Array.from([1]));
      await adapters.runs.claimDecision(makeDecision('run-counted', 'alice'));
      adapters.counter.reset();

      // Act
      await adapters.runs.getRun('run-counted');
      await adapters.runs.updateRun('run-counted', { turn: 1 }, { expectStatus: ['running'] });
      await adapters.runs.claimDecision(makeDecision('run-counted', 'bob'));

      // Assess
      expect(adapters.counter.snapshot()).toEqual({
        'DynamoDB:GetItem': 2,
        'DynamoDB:PutItem': 1,
        'DynamoDB:UpdateItem': 1,
      });
      expect(adapters.counter.total('DynamoDB')).toBe(4);
      expect(adapters.counter.total('KMS')).toBe(0);
    });
  });
});
