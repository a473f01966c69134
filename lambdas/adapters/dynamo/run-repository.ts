/**
 * The DynamoDB adapters share ONE table (key layout in `table-layout.ts`: string `pk`/`sk`,
 * GSI `inbox` on `inboxPk`/`inboxSk`, projection ALL). Item layout:
 *
 * | item          | pk                | sk                          | attributes                                   |
 * |---------------|-------------------|-----------------------------|----------------------------------------------|
 * | run           | `RUN#<runId>`     | `RUN`                       | RunRecord fields; `sealedState` (B) or, over  |
 * |               |                   |                             | 300,000 bytes, `sealedStatePointer` {key,     |
 * |               |                   |                             | sha256, size} to `runs/<runId>/state/<sha>`  |
 * | card          | `RUN#<runId>`     | `CARD`                      | StoredCard fields; while waiting:            |
 * |               |                   |                             | `inboxPk = WAITING#@all#<shard>` (before sharding: `WAITING`), |
 * |               |                   |                             | `inboxSk = <pausedAt>#<runId>`               |
 * | index entry   | `RUN#<runId>`     | `INBOX#<group or *>`        | while waiting: `inboxPk = WAITING#<route>#<shard>`, |
 * |               |                   |                             | `inboxSk = <pausedAt>#<runId>` (inbox-index.ts) |
 * | decision      | `RUN#<runId>`     | `DECISION#<turn, 6 digits>` | DecisionRecord fields; append-only audit     |
 * | approval      | `RUN#<runId>`     | `APPROVAL#<turn>#<userId>`  | ApprovalRecord fields (k-of-n); append-only  |
 * | user          | `USERS`           | `USER#<userId>`             | UserProfile fields                           |
 * | configuration | `CONFIGURATIONS`  | `CONFIGURATION#<id>`        | Configuration fields                         |
 * | task          | `TASKS`           | `TASK#<taskId>`             | Task fields                                  |
 * | page          | `PAGES`           | `PAGE#<pageId>`             | Page fields                                  |
 *
 * Ended runs, closed cards and (with a decision retention) decisions carry `removeAfter`, the
 * epoch seconds after which DynamoDB TTL may remove them (`retention` below).
 *
 * Items are parsed back through the core's zod schemas. The inbox lists waiting cards with
 * one Query per partition the viewer reaches on the `inbox` index, newest first, and one
 * BatchGetItem of the cards; `closeCard` REMOVEs the index attributes so a decided card leaves
 * the index (a sparse index).
 */
import { createHash } from 'node:crypto';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { CountersignError } from '../../core/errors.js';
import { DECISION_GATES } from '../../core/policy/policy-floor.js';
import {
  type ApprovalOutcome,
  type ClaimOutcome,
  type Clock,
  type ConditionalOutcome,
  type RunRepository,
  type StoredRun,
  systemClock,
  type WaitingCardsPage,
} from '../../core/ports.js';
import type { ApprovalRecord, CardShown, DecisionRecord, StoredCard } from '../../core/runs/approval-card.js';
import type { InboxRouting } from '../../core/runs/card-routing.js';
import {
  type RunRecord,
  type RunStatus,
  runRecordSchema,
  TERMINAL_STATUSES,
} from '../../core/runs/run-record.js';
import type { BlobStore } from '../blob-store.js';
import {
  assertInboxShards,
  decodeInboxCursor,
  EVERY_CARD_ROUTE,
  encodeInboxCursor,
  entryRoutesOfCard,
  INBOX_ENTRY_SORT_PREFIX,
  INBOX_SHARDS_DEFAULT,
  inboxPartition,
  inboxSortKey,
  partitionsOf,
  shardOf,
} from './inbox-index.js';
import { assertPageLimit, isConditionalCheckFailed, parseItem, withoutUndefined } from './item-codec.js';
import { TABLE_LAYOUT } from './table-layout.js';

/** Sealed state above this goes to the blob store: the item stays well under DynamoDB's 400 KB. */
export const SEALED_STATE_INLINE_LIMIT_BYTES = 300_000;

const PK = TABLE_LAYOUT.partitionKey;
const SK = TABLE_LAYOUT.sortKey;
const INBOX = TABLE_LAYOUT.inboxIndex;
const RUN_SORT_KEY = 'RUN';
const CARD_SORT_KEY = 'CARD';
const REMOVE_AFTER = TABLE_LAYOUT.timeToLiveAttribute;

export interface DynamoRepositoryProps {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /**
   * Where sealed state over 300,000 bytes goes.
   * @default - none: such a state is refused with a `configuration` error
   */
  readonly blobStore?: BlobStore;
  /**
   * How long ended runs, closed cards and decisions are kept: the repository stamps
   * `removeAfter` (TABLE_LAYOUT.timeToLiveAttribute) on them as it writes them.
   * @default - nothing is stamped: everything is kept
   */
  readonly retention?: RunRetention;
  /** @default systemClock */
  readonly clock?: Clock;
  /**
   * Shards per route of the inbox index (docs/runbook.md: one shard takes ~1,000 writes a
   * second). May grow between deployments, never shrink: cards in a dropped shard would hide.
   * @default 4
   */
  readonly inboxShards?: number;
}

/** Seconds an item is kept after the write that ends its use. */
export interface RunRetention {
  /** A run that ended (completed, failed, expired) and a card that closed. */
  readonly endedRunSeconds: number;
  /** A decision record; undefined keeps decisions forever. */
  readonly decisionSeconds?: number;
}

const sealedStatePointerSchema = z.object({
  key: z.string().check(z.minLength(1)),
  sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  size: z.number().check(z.int(), z.nonnegative()),
});
type SealedStatePointer = z.infer<typeof sealedStatePointerSchema>;

const binarySchema = z.instanceof(Uint8Array);

const storedCardSchema = z.object({
  runId: z.string(),
  owner: z.string(),
  label: z.string(),
  configurationId: z.string(),
  turn: z.number().check(z.int(), z.nonnegative()),
  digest: z.string(),
  pausedAt: z.string(),
  expiresAt: z.string(),
  toolNames: z.array(z.string()),
  writeToolNames: z.array(z.string()),
  fourEyes: z.boolean(),
  requiredApprovals: z.optional(z.number().check(z.int(), z.gte(1))),
  decisionGate: z.optional(z.enum(DECISION_GATES)),
  // A string set in DynamoDB (ADD keeps one entry per approver); an array in the core.
  approvedBy: z.optional(
    z.pipe(
      z.union([z.array(z.string()), z.instanceof(Set)]),
      z.transform((value: string[] | Set<unknown>) => [...value].map(String).sort()),
    ),
  ),
  revealRejectionReason: z.boolean(),
  approverGroups: z.optional(z.array(z.string())),
  state: z.enum(['waiting', 'decided']),
  sealedCard: binarySchema,
  sealedToken: binarySchema,
});

const decisionRecordSchema = z.object({
  runId: z.string(),
  turn: z.number().check(z.int(), z.nonnegative()),
  decision: z.enum(['approve', 'reject', 'cancel']),
  digest: z.string(),
  decidedBy: z.string(),
  decidedAt: z.string(),
  reason: z.optional(z.string()),
  // The audit shape belongs to the core; the adapter checks only that it is a list of calls.
  approvedBy: z.optional(z.array(z.string())),
  cardShown: z.custom<CardShown>(
    (value) =>
      typeof value === 'object' && value !== null && Array.isArray((value as { calls?: unknown }).calls),
  ),
});

const approvalRecordSchema = z.object({
  runId: z.string().check(z.minLength(1)),
  turn: z.number().check(z.int(), z.nonnegative()),
  digest: z.string().check(z.minLength(1)),
  approvedBy: z.string().check(z.minLength(1)),
  approvedAt: z.string(),
});

const approverGroupsAttribute = z.optional(z.array(z.string()));
/** BatchGetItem takes at most 100 keys; unprocessed keys are asked for again a few times. */
const BATCH_GET_MAX_KEYS = 100;
const BATCH_GET_ATTEMPTS = 5;

const runChangesSchema = z.strictObject(z.partial(z.omit(runRecordSchema, { runId: true })).shape);

/** The key of a run's item. */
export const runItemKey = (runId: string): Record<string, string> => ({
  [PK]: `RUN#${runId}`,
  [SK]: RUN_SORT_KEY,
});
const runPartition = (runId: string): string => `RUN#${runId}`;
const decisionSortKey = (turn: number): string => `DECISION#${String(turn).padStart(6, '0')}`;
const approvalSortKey = (turn: number, userId: string): string =>
  `APPROVAL#${String(turn).padStart(6, '0')}#${userId}`;

/**
 * `RunRepository` on DynamoDB: runs with their sealed state, approval cards (and the inbox
 * index), and the append-only decision records.
 *
 * @example
 * const runs = new DynamoRunRepository({ client: DynamoDBDocumentClient.from(new DynamoDBClient({})), tableName });
 * const claim = await runs.claimDecision(record);
 */
export class DynamoRunRepository implements RunRepository {
  protected readonly client: DynamoDBDocumentClient;
  protected readonly tableName: string;
  private readonly blobStore: BlobStore | undefined;
  private readonly retention: RunRetention | undefined;
  private readonly clock: Clock;
  private readonly inboxShards: number;

  public constructor(props: DynamoRepositoryProps) {
    this.inboxShards = props.inboxShards ?? INBOX_SHARDS_DEFAULT;
    assertInboxShards(this.inboxShards);
    this.client = props.client;
    this.tableName = props.tableName;
    this.blobStore = props.blobStore;
    this.retention = props.retention;
    this.clock = props.clock ?? systemClock;
  }

  /** Epoch seconds `seconds` from now, the value DynamoDB TTL compares with. */
  private removeAfter(seconds: number | undefined): number | undefined {
    if (seconds === undefined) return undefined;
    return Math.floor(this.clock.now().getTime() / 1000) + seconds;
  }

  public async createRun(record: RunRecord, sealedState: Uint8Array): Promise<void> {
    const state = await this.storeSealedState(record.runId, sealedState);
    const created = await this.putIfAbsent({
      ...withoutUndefined(runRecordSchema.parse(record)),
      ...state.attributes,
      [PK]: runPartition(record.runId),
      [SK]: RUN_SORT_KEY,
    });
    if (!created) throw new CountersignError('conflict', 'A run with this id already exists.');
  }

  public async getRun(runId: string): Promise<StoredRun | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [PK]: runPartition(runId), [SK]: RUN_SORT_KEY },
        ConsistentRead: true,
      }),
    );
    return item ? this.storedRunOf(runId, item) : undefined;
  }

  /** A run item as the core reads it: its run id from the key, its sealed state loaded. */
  protected async storedRunOf(runId: string, item: Record<string, unknown>): Promise<StoredRun> {
    const record = runFromKey(runId, parseItem(runRecordSchema, item, 'run'));
    return { record, sealedState: await this.loadSealedState(runId, item) };
  }

  public async getRunRecord(runId: string): Promise<RunRecord | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [PK]: runPartition(runId), [SK]: RUN_SORT_KEY },
        ConsistentRead: true,
      }),
    );
    return item ? runFromKey(runId, parseItem(runRecordSchema, item, 'run')) : undefined;
  }

  public async updateRun(
    runId: string,
    changes: Partial<Omit<RunRecord, 'runId'>>,
    options: {
      sealedState?: Uint8Array;
      expectStatus?: readonly RunStatus[];
      removeFields?: ReadonlyArray<keyof RunRecord>;
    } = {},
  ): Promise<ConditionalOutcome> {
    const { runId: _ignored, ...definedChanges } = withoutUndefined(changes as Partial<RunRecord>);
    const parsedChanges = runChangesSchema.safeParse(definedChanges);
    if (!parsedChanges.success) {
      throw new CountersignError('internal', 'A run update has fields of an unexpected shape.', {
        expose: false,
      });
    }
    if (options.expectStatus && options.expectStatus.length === 0) return { kind: 'condition-failed' };

    const names: Record<string, string> = { '#pk': PK, '#runId': 'runId' };
    const values: Record<string, unknown> = { ':runId': runId };
    // Setting runId to itself keeps the expression valid when nothing else changes.
    const setClauses = ['#runId = :runId'];
    const removeClauses: string[] = [];
    Object.entries(parsedChanges.data).forEach(([field, value], index) => {
      names[`#set${index}`] = field;
      values[`:set${index}`] = value;
      setClauses.push(`#set${index} = :set${index}`);
    });
    // The write that ends a run starts its retention (DynamoDB TTL removes it afterwards).
    const status = parsedChanges.data.status;
    const endedRunRemoval =
      status !== undefined && TERMINAL_STATUSES.has(status)
        ? this.removeAfter(this.retention?.endedRunSeconds)
        : undefined;
    if (endedRunRemoval !== undefined) {
      names['#removeAfter'] = REMOVE_AFTER;
      values[':removeAfter'] = endedRunRemoval;
      setClauses.push('#removeAfter = :removeAfter');
    }
    (options.removeFields ?? []).forEach((field, index) => {
      if (field === 'runId' || !(field in runRecordSchema.shape)) {
        throw new CountersignError('internal', 'A run update removes an unknown field.', { expose: false });
      }
      if (field in parsedChanges.data) {
        throw new CountersignError('internal', 'A run update both sets and removes a field.', {
          expose: false,
        });
      }
      names[`#remove${index}`] = field;
      removeClauses.push(`#remove${index}`);
    });
    if (options.sealedState) {
      const state = await this.storeSealedState(runId, options.sealedState);
      names['#sealedState'] = 'sealedState';
      names['#sealedStatePointer'] = 'sealedStatePointer';
      if (state.pointer) {
        values[':sealedStatePointer'] = state.pointer;
        setClauses.push('#sealedStatePointer = :sealedStatePointer');
        removeClauses.push('#sealedState');
      } else {
        values[':sealedState'] = options.sealedState;
        setClauses.push('#sealedState = :sealedState');
        removeClauses.push('#sealedStatePointer');
      }
    }

    let condition = 'attribute_exists(#pk)';
    if (options.expectStatus) {
      names['#status'] = 'status';
      const placeholders = options.expectStatus.map((status, index) => {
        values[`:expect${index}`] = status;
        return `:expect${index}`;
      });
      condition += ` AND #status IN (${placeholders.join(', ')})`;
    }
    const updateExpression =
      `SET ${setClauses.join(', ')}` +
      (removeClauses.length > 0 ? ` REMOVE ${removeClauses.join(', ')}` : '');

    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [PK]: runPartition(runId), [SK]: RUN_SORT_KEY },
          UpdateExpression: updateExpression,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return { kind: 'written' };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { kind: 'condition-failed' };
      throw error;
    }
  }

  public async putCard(card: StoredCard): Promise<void> {
    const { approvedBy, ...parsed } = storedCardSchema.parse(card);
    // The card item carries the every-card index key (a put replaces a pre-sharding `WAITING`
    // key); its group entries are written after it, so an entry never points at nothing.
    const shard = shardOf(parsed.runId, this.inboxShards);
    const inboxAttributes =
      parsed.state === 'waiting'
        ? {
            [INBOX.partitionKey]: inboxPartition(EVERY_CARD_ROUTE, shard),
            [INBOX.sortKey]: inboxSortKey(parsed),
          }
        : {};
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...parsed,
          // DynamoDB refuses an empty set: nobody has approved means no attribute.
          ...(approvedBy && approvedBy.length > 0 ? { approvedBy: new Set(approvedBy) } : {}),
          ...inboxAttributes,
          [PK]: runPartition(parsed.runId),
          [SK]: CARD_SORT_KEY,
        },
      }),
    );
    if (parsed.state !== 'waiting') {
      await this.unindexEntries(parsed.runId, parsed);
      return;
    }
    await Promise.all(
      entryRoutesOfCard(parsed).map((route) =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              [PK]: runPartition(parsed.runId),
              [SK]: `${INBOX_ENTRY_SORT_PREFIX}${route}`,
              [INBOX.partitionKey]: inboxPartition(route, shard),
              [INBOX.sortKey]: inboxSortKey(parsed),
            },
          }),
        ),
      ),
    );
  }

  public async getCard(runId: string): Promise<StoredCard | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [PK]: runPartition(runId), [SK]: CARD_SORT_KEY },
        ConsistentRead: true,
      }),
    );
    return item ? runFromKey(runId, parseStoredCard(item)) : undefined;
  }

  public async listWaitingCards(options: {
    limit: number;
    cursor?: string;
    routing?: InboxRouting;
  }): Promise<WaitingCardsPage> {
    assertPageLimit(options.limit);
    const before = options.cursor === undefined ? undefined : decodeInboxCursor(options.cursor);
    const partitions = partitionsOf(options.routing ?? { kind: 'every' }, this.inboxShards);
    // Each partition's newest `limit` entries below the cursor hold the merged page's `limit`.
    const outputs = await Promise.all(
      partitions.map((partition) =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: INBOX.name,
            KeyConditionExpression:
              before === undefined ? '#inboxPk = :partition' : '#inboxPk = :partition AND #inboxSk < :before',
            ExpressionAttributeNames: {
              '#inboxPk': INBOX.partitionKey,
              ...(before === undefined ? {} : { '#inboxSk': INBOX.sortKey }),
            },
            ExpressionAttributeValues: {
              ':partition': partition,
              ...(before === undefined ? {} : { ':before': before }),
            },
            ScanIndexForward: false,
            Limit: options.limit,
          }),
        ),
      ),
    );
    const entries = new Map<string, string>();
    const cardItems = new Map<string, Record<string, unknown>>();
    for (const item of outputs.flatMap((output) => output.Items ?? [])) {
      const sortKey = item[INBOX.sortKey];
      if (typeof sortKey !== 'string') continue;
      const runId = runIdOfPartition(item[PK]);
      // A card routed to several groups the viewer is in has one entry each: shown once.
      entries.set(runId, sortKey);
      if (item[SK] === CARD_SORT_KEY) cardItems.set(runId, item);
    }
    const newestFirst = [...entries].sort(([, left], [, right]) =>
      left < right ? 1 : left > right ? -1 : 0,
    );
    const page = newestFirst.slice(0, options.limit);
    const more = newestFirst.length > options.limit || outputs.some((output) => output.LastEvaluatedKey);
    // Cards the index returned whole are used as they are; entries are followed to their card.
    const followed = await this.readCardItems(
      page.map(([runId]) => runId).filter((runId) => !cardItems.has(runId)),
    );
    const items = new Map([...cardItems, ...followed]);
    const cards: StoredCard[] = [];
    const unreadableRunIds: string[] = [];
    for (const [runId] of page) {
      const item = items.get(runId);
      // An entry whose card closed between the query and the read is no longer waiting.
      if (item === undefined || item.state !== 'waiting') continue;
      // One item that does not parse must not take the page down: it is listed as unreadable.
      const parsed = z.safeParse(storedCardSchema, item);
      if (parsed.success) cards.push(runFromKey(runId, parsed.data));
      else unreadableRunIds.push(runId);
    }
    const last = page.at(-1);
    return {
      cards,
      ...(unreadableRunIds.length > 0 ? { unreadableRunIds } : {}),
      ...(more && last !== undefined ? { cursor: encodeInboxCursor(last[1]) } : {}),
    };
  }

  /** The card items of `runIds`: one BatchGetItem per 100 (an inbox page holds at most 100). */
  private async readCardItems(runIds: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
    const items = new Map<string, Record<string, unknown>>();
    for (let start = 0; start < runIds.length; start += BATCH_GET_MAX_KEYS) {
      let keys: Record<string, unknown>[] | undefined = runIds
        .slice(start, start + BATCH_GET_MAX_KEYS)
        .map((runId) => ({ [PK]: runPartition(runId), [SK]: CARD_SORT_KEY }));
      for (let attempt = 0; keys !== undefined && keys.length > 0; attempt += 1) {
        if (attempt >= BATCH_GET_ATTEMPTS) {
          throw new CountersignError('internal', 'The waiting cards could not be read.', { expose: false });
        }
        const output: BatchGetCommandOutput = await this.client.send(
          new BatchGetCommand({
            RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } },
          }),
        );
        for (const item of output.Responses?.[this.tableName] ?? [])
          items.set(runIdOfPartition(item[PK]), item);
        // DynamoDB may leave keys unprocessed (throughput, 16 MB): they are asked for again.
        keys = output.UnprocessedKeys?.[this.tableName]?.Keys;
      }
    }
    return items;
  }

  public waitingCardCursor(card: Pick<StoredCard, 'runId' | 'pausedAt'>): string {
    return encodeInboxCursor(inboxSortKey(card));
  }

  public async closeCard(runId: string): Promise<void> {
    // A closed card is kept as long as an ended run; the next pause replaces the whole item.
    const cardRemoval = this.removeAfter(this.retention?.endedRunSeconds);
    let closed: Record<string, unknown> | undefined;
    try {
      const output = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [PK]: runPartition(runId), [SK]: CARD_SORT_KEY },
          // REMOVE: the card leaves the every-card partition (or, paused before sharding, `WAITING`).
          UpdateExpression: `SET #state = :decided${cardRemoval === undefined ? '' : ', #removeAfter = :removeAfter'} REMOVE #inboxPk, #inboxSk`,
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: {
            '#pk': PK,
            '#state': 'state',
            '#inboxPk': INBOX.partitionKey,
            '#inboxSk': INBOX.sortKey,
            ...(cardRemoval === undefined ? {} : { '#removeAfter': REMOVE_AFTER }),
          },
          ExpressionAttributeValues: {
            ':decided': 'decided',
            ...(cardRemoval === undefined ? {} : { ':removeAfter': cardRemoval }),
          },
          // The card as it was names its routes, so its index entries close without another read.
          ReturnValues: 'ALL_OLD',
        }),
      );
      closed = output.Attributes;
    } catch (error) {
      // No card: nothing is in the inbox, which is what closing wants.
      if (!isConditionalCheckFailed(error)) throw error;
      return;
    }
    const groups = z.safeParse(approverGroupsAttribute, closed?.approverGroups);
    await this.unindexEntries(runId, groups.success && groups.data ? { approverGroups: groups.data } : {});
  }

  /**
   * Takes the card's index entries out of the inbox index (REMOVE of the index key: a sparse
   * index drops them). Conditional, so closing never creates an entry that was never there.
   */
  private async unindexEntries(runId: string, card: { approverGroups?: readonly string[] }): Promise<void> {
    const entryRemoval = this.removeAfter(this.retention?.endedRunSeconds);
    await Promise.all(
      entryRoutesOfCard(card).map(async (route) => {
        try {
          await this.client.send(
            new UpdateCommand({
              TableName: this.tableName,
              Key: { [PK]: runPartition(runId), [SK]: `${INBOX_ENTRY_SORT_PREFIX}${route}` },
              UpdateExpression: `REMOVE #inboxPk, #inboxSk${entryRemoval === undefined ? '' : ' SET #removeAfter = :removeAfter'}`,
              ConditionExpression: 'attribute_exists(#pk)',
              ExpressionAttributeNames: {
                '#pk': PK,
                '#inboxPk': INBOX.partitionKey,
                '#inboxSk': INBOX.sortKey,
                ...(entryRemoval === undefined ? {} : { '#removeAfter': REMOVE_AFTER }),
              },
              ...(entryRemoval === undefined
                ? {}
                : { ExpressionAttributeValues: { ':removeAfter': entryRemoval } }),
            }),
          );
        } catch (error) {
          if (!isConditionalCheckFailed(error)) throw error;
        }
      }),
    );
  }

  /** Writes `item` unless one with its key exists (a conditional put); false when one did. */
  private async putIfAbsent(item: Record<string, unknown>): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': PK },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  public async claimDecision(record: DecisionRecord): Promise<ClaimOutcome> {
    const parsed = decisionRecordSchema.parse(record);
    assertTurn(parsed.turn);
    const claimed = await this.putIfAbsent({
      ...withoutUndefined(parsed),
      ...withoutUndefined({ [REMOVE_AFTER]: this.removeAfter(this.retention?.decisionSeconds) }),
      [PK]: runPartition(parsed.runId),
      [SK]: decisionSortKey(parsed.turn),
    });
    if (claimed) return { kind: 'claimed' };
    const existing = await this.getDecision(parsed.runId, parsed.turn);
    if (!existing) {
      // Decisions are never deleted, so a failed claim always has a winner to read back.
      throw new CountersignError('internal', 'A decision claim failed but no decision was found.', {
        expose: false,
      });
    }
    return { kind: 'already-decided', existing };
  }

  public async recordApproval(approval: ApprovalRecord): Promise<ApprovalOutcome> {
    const parsed = approvalRecordSchema.parse(approval);
    assertTurn(parsed.turn);
    // The audit record first: an approval that counts is always on record. The same approver
    // approving again finds it there: the first record stands, the tally below is idempotent.
    await this.putIfAbsent({
      ...parsed,
      [PK]: runPartition(parsed.runId),
      [SK]: approvalSortKey(parsed.turn, parsed.approvedBy),
    });
    try {
      const { Attributes: card } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [PK]: runPartition(parsed.runId), [SK]: CARD_SORT_KEY },
          UpdateExpression: 'ADD #approvedBy :approver',
          ConditionExpression: '#state = :waiting AND #turn = :turn AND #digest = :digest',
          ExpressionAttributeNames: {
            '#approvedBy': 'approvedBy',
            '#state': 'state',
            '#turn': 'turn',
            '#digest': 'digest',
          },
          ExpressionAttributeValues: {
            ':approver': new Set([parsed.approvedBy]),
            ':waiting': 'waiting',
            ':turn': parsed.turn,
            ':digest': parsed.digest,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const tally = card?.approvedBy;
      const approvedBy = tally instanceof Set ? [...tally].map(String).sort() : [parsed.approvedBy];
      return { kind: 'recorded', approvedBy };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { kind: 'card-moved' };
      throw error;
    }
  }

  public async getDecision(runId: string, turn: number): Promise<DecisionRecord | undefined> {
    assertTurn(turn);
    const { Item: item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { [PK]: runPartition(runId), [SK]: decisionSortKey(turn) },
        ConsistentRead: true,
      }),
    );
    return item ? parseItem(decisionRecordSchema, item, 'decision') : undefined;
  }

  /** The attributes that hold a sealed state: inline, or a pointer to a blob written first. */
  private async storeSealedState(
    runId: string,
    sealedState: Uint8Array,
  ): Promise<{ attributes: Record<string, unknown>; pointer?: SealedStatePointer }> {
    if (sealedState.byteLength <= SEALED_STATE_INLINE_LIMIT_BYTES) {
      return { attributes: { sealedState } };
    }
    if (!this.blobStore) {
      throw new CountersignError(
        'configuration',
        'The sealed run state is larger than a DynamoDB item allows and no blob store is configured.',
        { expose: false },
      );
    }
    const sha256 = createHash('sha256').update(sealedState).digest('hex');
    const pointer = { key: sealedStateBlobKey(runId, sha256), sha256, size: sealedState.byteLength };
    await this.blobStore.put(pointer.key, sealedState);
    return { attributes: { sealedStatePointer: pointer }, pointer };
  }

  private async loadSealedState(runId: string, item: Record<string, unknown>): Promise<Uint8Array> {
    if (item.sealedState instanceof Uint8Array) return item.sealedState;
    const pointer = sealedStatePointerSchema.safeParse(item.sealedStatePointer);
    if (!pointer.success) {
      throw new CountersignError('sealed-state-rejected', 'The sealed run state was refused: it is missing.');
    }
    const { key, sha256, size } = pointer.data;
    if (key !== sealedStateBlobKey(runId, sha256)) {
      throw new CountersignError(
        'sealed-state-rejected',
        'The sealed run state was refused: its pointer names another blob.',
      );
    }
    if (!this.blobStore) {
      throw new CountersignError(
        'configuration',
        'A sealed run state is stored in a blob store and none is configured.',
        { expose: false },
      );
    }
    const bytes = await this.blobStore.get(key);
    if (!bytes) {
      throw new CountersignError(
        'sealed-state-rejected',
        'The sealed run state was refused: its blob is missing.',
      );
    }
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (bytes.byteLength !== size || actual !== sha256) {
      throw new CountersignError(
        'sealed-state-rejected',
        'The sealed run state was refused: its blob does not match its checksum.',
      );
    }
    return bytes;
  }
}

/**
 * An item with its run id taken from the key it was read under, never from its own `runId`
 * attribute: the run id is the encryption context of the item's sealed blobs, so an item
 * copied under another run's key is opened as that run's and refused by the sealer.
 */
function runFromKey<Item extends { runId: string }>(runId: string, item: Item): Item {
  return { ...item, runId };
}

/** The run id of a `RUN#<runId>` partition key; anything else is not a run item. */
/** A card item whose plaintext part does not parse cannot be opened, like a tampered blob. */
function parseStoredCard(item: Record<string, unknown>): StoredCard {
  const parsed = z.safeParse(storedCardSchema, item);
  if (!parsed.success) {
    throw new CountersignError('sealed-state-rejected', 'The stored card has an unexpected shape.');
  }
  return parsed.data;
}

function runIdOfPartition(partitionKey: unknown): string {
  if (typeof partitionKey !== 'string' || !partitionKey.startsWith('RUN#') || partitionKey.length <= 4) {
    throw new CountersignError('internal', 'A stored card has an unexpected key.', { expose: false });
  }
  return partitionKey.slice('RUN#'.length);
}

/** Where an overflowing sealed state lives: content-addressed, so a retried write is idempotent. */
export function sealedStateBlobKey(runId: string, sha256: string): string {
  return `runs/${runId}/state/${sha256}`;
}

function assertTurn(turn: number): void {
  if (!Number.isInteger(turn) || turn < 0 || turn > 999_999) {
    throw new CountersignError('internal', 'A decision names a turn out of range.', { expose: false });
  }
}
