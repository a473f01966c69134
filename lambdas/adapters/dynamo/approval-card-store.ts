import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import type { RoutedCard } from '../../core/approvals/card-routing.js';
import {
  type CardClosing,
  isCardOpen,
  STORED_CARD_SCHEMA_VERSION,
  type StoredCard,
  storedCardSchema,
} from '../../core/approvals/stored-card.js';
import type { ConditionalOutcome, RunRepository, WaitingCardsPage } from '../../core/ports.js';
import { batchGetItems } from './batch-get-items.js';
import {
  decodeInboxCursor,
  EVERY_CARD_ROUTE,
  encodeInboxCursor,
  entryRoutesOfCard,
  inboxPartition,
  inboxSortKey,
  partitionsOf,
  shardOf,
} from './inbox-index.js';
import { assertPageLimit, isConditionalCheckFailed } from './item-codec.js';
import { putWhen } from './put-if-absent.js';
import {
  CARD_SORT_KEY,
  cardItemKey,
  inboxEntryItemKey,
  runFromKey,
  runIdOfPartition,
} from './run-item-keys.js';
import {
  approverGroupsAttribute,
  encodeApprovalContent,
  encodeDelegatedApproval,
  escalationAttribute,
  parseStoredCard,
  readStoredCardItem,
  type WaitingCardsRequest,
} from './run-item-schemas.js';
import type { RunTable } from './run-table.js';
import { UpdateExpression } from './update-expression.js';

const PK = TABLE_LAYOUT.partitionKey;
const SK = TABLE_LAYOUT.sortKey;
const INBOX = TABLE_LAYOUT.inboxIndex;

type CardMethods =
  | 'putCard'
  | 'renewCardToken'
  | 'markCardNotified'
  | 'getCard'
  | 'listWaitingCards'
  | 'waitingCardCursor'
  | 'closeCard';

/**
 * The approval cards of `RunRepository` on DynamoDB: one card item per run, and while it waits
 * the sharded inbox index (inbox-index.ts) lists it, through the card's own index key (every
 * card) and one index entry item per group route. Closing REMOVEs the index keys: a sparse
 * index drops what no longer waits.
 *
 * @example
 * const cards = new DynamoApprovalCardStore(new RunTable(client, tableName, undefined, systemClock), 4);
 * const page = await cards.listWaitingCards({ limit: 20 });
 */
export class DynamoApprovalCardStore implements Pick<RunRepository, CardMethods> {
  public constructor(
    private readonly table: RunTable,
    private readonly inboxShards: number,
  ) {}

  public async putCard(
    card: StoredCard,
    options: { unlessClosedAtItsTurn?: boolean } = {},
  ): Promise<ConditionalOutcome> {
    const { approvedBy, lapsedApprovers, delegatedApprovals, approvalContents, ...parsed } =
      storedCardSchema.parse(card);
    // The card item carries the every-card index key (a put replaces a pre-sharding `WAITING`
    // key); its group entries are written after it, so an entry never points at nothing.
    const shard = shardOf(parsed.runId, this.inboxShards);
    const inboxAttributes = isCardOpen(parsed)
      ? {
          [INBOX.partitionKey]: inboxPartition(EVERY_CARD_ROUTE, shard),
          [INBOX.sortKey]: inboxSortKey(parsed),
        }
      : {};
    // `waiting`: an open card written before card version 2.
    const condition = options.unlessClosedAtItsTurn
      ? {
          ConditionExpression: '(attribute_not_exists(#pk) OR #turn <> :turn OR #state IN (:open, :waiting))',
          ExpressionAttributeNames: { '#pk': PK, '#turn': 'turn', '#state': 'state' },
          ExpressionAttributeValues: { ':turn': parsed.turn, ':open': 'open', ':waiting': 'waiting' },
        }
      : {};
    const item = {
      ...parsed,
      // DynamoDB refuses an empty set: nobody has approved (or lapsed) means no attribute.
      ...(approvedBy && approvedBy.length > 0 ? { approvedBy: new Set(approvedBy) } : {}),
      ...(lapsedApprovers && lapsedApprovers.length > 0 ? { lapsedApprovers: new Set(lapsedApprovers) } : {}),
      ...(delegatedApprovals && delegatedApprovals.length > 0
        ? { delegatedApprovals: new Set(delegatedApprovals.map(encodeDelegatedApproval)) }
        : {}),
      ...(approvalContents && approvalContents.length > 0
        ? { approvalContents: new Set(approvalContents.map(encodeApprovalContent)) }
        : {}),
      ...inboxAttributes,
      ...cardItemKey(parsed.runId),
    };
    if (!(await putWhen(this.table.client, this.table.tableName, item, condition))) {
      return { kind: 'condition-failed' };
    }
    if (!isCardOpen(parsed)) {
      await this.unindexEntries(parsed.runId, parsed);
      return { kind: 'written' };
    }
    await this.indexEntries(parsed);
    return { kind: 'written' };
  }

  /** An open card's index entry items, one per group route (or the open route). */
  private async indexEntries(card: Omit<StoredCard, 'approvedBy'>): Promise<void> {
    const shard = shardOf(card.runId, this.inboxShards);
    await Promise.all(
      entryRoutesOfCard(card).map((route) =>
        this.table.client.send(
          new PutCommand({
            TableName: this.table.tableName,
            Item: {
              ...inboxEntryItemKey(card.runId, route),
              [INBOX.partitionKey]: inboxPartition(route, shard),
              [INBOX.sortKey]: inboxSortKey(card),
            },
          }),
        ),
      ),
    );
  }

  public async renewCardToken(
    runId: string,
    change: { turn: number; digest: string; sealedToken: Uint8Array; waitId: string },
  ): Promise<ConditionalOutcome> {
    // The whole item becomes the current version: it names the wait whose token it now holds.
    const update = new UpdateExpression()
      .set('schemaVersion', STORED_CARD_SCHEMA_VERSION)
      .set('sealedToken', change.sealedToken)
      .set('waitId', change.waitId);
    const condition = [
      `${update.name('state')} IN (${update.value('open')}, ${update.value('waiting')})`,
      `${update.name('turn')} = ${update.value(change.turn)}`,
      `${update.name('digest')} = ${update.value(change.digest)}`,
    ].join(' AND ');
    const renewed = await this.updateCard(runId, update, condition, 'ALL_NEW');
    if (renewed.kind === 'condition-failed') return renewed;
    // The pause that put the card may have failed before its index entries: written again (the
    // same items), so the card is in every inbox it is routed to.
    const card = renewed.attributes === undefined ? undefined : readStoredCardItem(renewed.attributes);
    if (card !== undefined) await this.indexEntries(card);
    return { kind: 'written' };
  }

  public async markCardNotified(runId: string, turn: number): Promise<void> {
    const update = new UpdateExpression().set('notification', 'sent');
    await this.updateCard(runId, update, `${update.name('turn')} = ${update.value(turn)}`);
  }

  /** One conditional UpdateItem of an existing card, with the attributes asked for. */
  private async updateCard(
    runId: string,
    update: UpdateExpression,
    condition: string | undefined,
    returnValues: 'ALL_NEW' | 'ALL_OLD' | 'NONE' = 'NONE',
  ): Promise<{ kind: 'written'; attributes?: Record<string, unknown> } | { kind: 'condition-failed' }> {
    const exists = `attribute_exists(${update.name(PK)})`;
    try {
      const output = await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: cardItemKey(runId),
          ...update.toInput(condition === undefined ? exists : `${exists} AND ${condition}`),
          ReturnValues: returnValues,
        }),
      );
      return { kind: 'written', ...(output.Attributes ? { attributes: output.Attributes } : {}) };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { kind: 'condition-failed' };
      throw error;
    }
  }

  public async getCard(runId: string): Promise<StoredCard | undefined> {
    const { Item: item } = await this.table.client.send(
      new GetCommand({ TableName: this.table.tableName, Key: cardItemKey(runId), ConsistentRead: true }),
    );
    return item ? runFromKey(runId, parseStoredCard(item)) : undefined;
  }

  public async listWaitingCards(options: WaitingCardsRequest): Promise<WaitingCardsPage> {
    assertPageLimit(options.limit);
    const before = options.cursor === undefined ? undefined : decodeInboxCursor(options.cursor);
    const partitions = partitionsOf(options.routing ?? { kind: 'every' }, this.inboxShards);
    // Each partition's newest `limit` entries below the cursor hold the merged page's `limit`.
    const outputs = await Promise.all(
      partitions.map((partition) =>
        this.table.client.send(
          new QueryCommand({
            TableName: this.table.tableName,
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
      if (item === undefined) continue;
      // One item that does not parse must not take the page down: it is listed as unreadable.
      const card = readStoredCardItem(item);
      if (card === undefined) unreadableRunIds.push(runId);
      // An entry whose card closed between the query and the read is no longer waiting.
      else if (isCardOpen(card)) cards.push(runFromKey(runId, card));
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
    const { client, tableName } = this.table;
    const items = await batchGetItems(client, tableName, runIds.map(cardItemKey), 'The waiting cards');
    return new Map(items.map((item) => [runIdOfPartition(item[PK]), item]));
  }

  public waitingCardCursor(card: Pick<StoredCard, 'runId' | 'pausedAt'>): string {
    return encodeInboxCursor(inboxSortKey(card));
  }

  public async closeCard(
    runId: string,
    because: CardClosing,
    options: { expectWaitId?: string | null } = {},
  ): Promise<ConditionalOutcome> {
    // A closed card is kept as long as an ended run; the next pause replaces the whole item.
    // REMOVE: the card leaves the every-card partition (or, paused before sharding, `WAITING`).
    // A version 1 item becomes a whole version 2 one: its other attributes are the same.
    const update = new UpdateExpression()
      .set('schemaVersion', STORED_CARD_SCHEMA_VERSION)
      .set('state', 'closed')
      .set('closedBecause', because)
      .setWhenDefined(TABLE_LAYOUT.timeToLiveAttribute, this.table.endedRunRemoval())
      .remove(INBOX.partitionKey)
      .remove(INBOX.sortKey);
    const expectWaitId = options.expectWaitId;
    const waitCondition =
      expectWaitId === undefined
        ? undefined
        : expectWaitId === null
          ? `attribute_not_exists(${update.name('waitId')})`
          : `${update.name('waitId')} = ${update.value(expectWaitId)}`;
    // The card as it was names its routes, so its index entries close without another read.
    const outcome = await this.updateCard(runId, update, waitCondition, 'ALL_OLD');
    if (outcome.kind === 'condition-failed') {
      // No card: nothing is in the inbox, which is what closing wants. A card holding another
      // wait's token is not this caller's to close.
      if (waitCondition === undefined) return { kind: 'written' };
      return (await this.getCard(runId)) === undefined ? { kind: 'written' } : outcome;
    }
    const closed = outcome.attributes;
    const groups = z.safeParse(approverGroupsAttribute, closed?.approverGroups);
    const escalation = z.safeParse(escalationAttribute, closed?.escalation);
    await this.unindexEntries(runId, {
      ...(groups.success && groups.data ? { approverGroups: groups.data } : {}),
      ...(escalation.success && escalation.data ? { escalation: escalation.data } : {}),
    });
    return { kind: 'written' };
  }

  /**
   * Takes the card's index entries out of the inbox index (REMOVE of the index key: a sparse
   * index drops them). Conditional, so closing never creates an entry that was never there.
   */
  private async unindexEntries(runId: string, card: RoutedCard): Promise<void> {
    const entryRemoval = this.table.endedRunRemoval();
    await Promise.all(
      entryRoutesOfCard(card).map(async (route) => {
        const update = new UpdateExpression()
          .remove(INBOX.partitionKey)
          .remove(INBOX.sortKey)
          .setWhenDefined(TABLE_LAYOUT.timeToLiveAttribute, entryRemoval);
        try {
          await this.table.client.send(
            new UpdateCommand({
              TableName: this.table.tableName,
              Key: inboxEntryItemKey(runId, route),
              ...update.toInput(`attribute_exists(${update.name(PK)})`),
            }),
          );
        } catch (error) {
          if (!isConditionalCheckFailed(error)) throw error;
        }
      }),
    );
  }
}
