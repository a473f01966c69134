import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { isCardInRouting, routedGroupsOf } from '../../core/approvals/card-routing.js';
import { type InboxOrder, matchesInboxFilter } from '../../core/approvals/inbox-filter.js';
import {
  type CardClosing,
  isCardUndecided,
  STORED_CARD_SCHEMA_VERSION,
  type StoredCard,
  storedCardSchema,
} from '../../core/approvals/stored-card.js';
import type {
  CardCloseOutcome,
  ConditionalOutcome,
  RunRepository,
  WaitingCardsPage,
} from '../../core/ports.js';
import { batchGetItems } from './batch-get-items.js';
import {
  APPROVER_GROUPS_ATTRIBUTE,
  APPROVER_ROUTE,
  decodeInboxCursor,
  ENTRY_FILTERED_ATTRIBUTES,
  EVERY_CARD_ROUTE,
  encodeInboxCursor,
  inboxPageFilterOf,
  inboxPartition,
  inboxSortKey,
  partitionsOf,
  shardOf,
} from './inbox-index.js';
import { queryInboxPage } from './inbox-page-query.js';
import { assertPageLimit, type ItemKey, isConditionalCheckFailed } from './item-codec.js';
import { putWhen } from './put-if-absent.js';
import {
  approverEntryItemKey,
  CARD_SORT_KEY,
  cardItemKey,
  runFromKey,
  runIdOfPartition,
} from './run-item-keys.js';
import {
  encodeApprovalContent,
  encodeDelegatedApproval,
  parseStoredCard,
  readStoredCardItem,
  type WaitingCardsRequest,
} from './run-item-schemas.js';
import type { RunTable } from './run-table.js';
import { UpdateExpression } from './update-expression.js';

const PK = TABLE_LAYOUT.partitionKey;
const SK = TABLE_LAYOUT.sortKey;
const INBOX = TABLE_LAYOUT.inboxIndex;
/**
 * Entries an approver's page evaluates on its first round, over all shards, per card of the
 * page: one round serves an approver who may see about one waiting card in twelve or more
 * (inbox-page-query.ts reads further, twice as many a round, for fewer).
 */
const APPROVER_FIRST_EVALUATION_PER_CARD = 16;

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
 * card) and one approver entry item naming its groups. Closing REMOVEs the index keys: a sparse
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
    // key); its approver entry is written after it, so an entry never points at nothing.
    const shard = shardOf(parsed.runId, this.inboxShards);
    const inboxAttributes = isCardUndecided(parsed)
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
    if (!isCardUndecided(parsed)) {
      await this.unindexEntry(parsed.runId);
      return { kind: 'written' };
    }
    await this.indexEntry(parsed);
    return { kind: 'written' };
  }

  /** An open card's approver entry item, naming the groups an approver's page filters on. */
  private async indexEntry(card: Omit<StoredCard, 'approvedBy'>): Promise<void> {
    const shard = shardOf(card.runId, this.inboxShards);
    // The groups it reaches: a retried pause of an escalated card keeps the groups it added.
    const groups = routedGroupsOf(card);
    await this.table.client.send(
      new PutCommand({
        TableName: this.table.tableName,
        Item: {
          ...approverEntryItemKey(card.runId),
          [INBOX.partitionKey]: inboxPartition(APPROVER_ROUTE, shard),
          [INBOX.sortKey]: inboxSortKey(card),
          // What an approver's page filters on; none means any approver may see the card.
          ...(groups.length > 0 ? { [APPROVER_GROUPS_ATTRIBUTE]: groups } : {}),
          // What the inbox's filters read, so a filtered page is filtered as DynamoDB reads.
          ...Object.fromEntries(ENTRY_FILTERED_ATTRIBUTES.map((attribute) => [attribute, card[attribute]])),
        },
      }),
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
    // The pause that put the card may have failed before its approver entry: written again (the
    // same item), so the card is in the inbox of every approver it is routed to.
    const card = renewed.attributes === undefined ? undefined : readStoredCardItem(renewed.attributes);
    if (card !== undefined) await this.indexEntry(card);
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
    const order = options.order ?? 'newest';
    const position = options.cursor === undefined ? undefined : decodeInboxCursor(options.cursor, order);
    const routing = options.routing ?? { kind: 'every' };
    const filter = inboxPageFilterOf(routing, options.filter);
    const { items, nextPosition } = await queryInboxPage(this.table.client, this.table.tableName, {
      partitions: partitionsOf(routing, this.inboxShards),
      limit: options.limit,
      order,
      ...(position === undefined ? {} : { position }),
      ...(filter === undefined ? {} : { filter }),
      // Admins read every card: each shard may hold the whole page. Approvers read entries
      // filtered on their groups, so a page's Queries do not grow with the groups.
      firstEvaluation:
        routing.kind === 'every'
          ? options.limit
          : Math.ceil((APPROVER_FIRST_EVALUATION_PER_CARD * options.limit) / this.inboxShards),
    });
    const page = items.map(({ item }) => ({ runId: runIdOfPartition(item[PK]), item }));
    // Cards the index returned whole are used as they are; entries are followed to their card.
    const followed = await this.readCardItems(
      page.filter(({ item }) => item[SK] !== CARD_SORT_KEY).map(({ runId }) => runId),
    );
    const cards: StoredCard[] = [];
    const unreadableRunIds: string[] = [];
    for (const { runId, item } of page) {
      const cardItem = item[SK] === CARD_SORT_KEY ? item : followed.get(runId);
      if (cardItem === undefined) continue;
      // One item that does not parse must not take the page down: it is listed as unreadable.
      const card = readStoredCardItem(cardItem);
      if (card === undefined) unreadableRunIds.push(runId);
      // An entry whose card closed between the query and the read is no longer waiting; the
      // card's own groups and fields decide, whatever its entry said (fail closed).
      else if (
        isCardUndecided(card) &&
        isCardInRouting(card, routing) &&
        matchesInboxFilter(card, options.filter ?? {})
      ) {
        cards.push(runFromKey(runId, card));
      }
    }
    return {
      cards,
      ...(unreadableRunIds.length > 0 ? { unreadableRunIds } : {}),
      ...(nextPosition === undefined ? {} : { cursor: encodeInboxCursor(nextPosition, order) }),
    };
  }

  /** The card items of `runIds`: one BatchGetItem per 100 (an inbox page holds at most 100). */
  private async readCardItems(runIds: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
    const { client, tableName } = this.table;
    const items = await batchGetItems(client, tableName, runIds.map(cardItemKey), 'The waiting cards');
    return new Map(items.map((item) => [runIdOfPartition(item[PK]), item]));
  }

  public waitingCardCursor(card: Pick<StoredCard, 'runId' | 'pausedAt'>, order?: InboxOrder): string {
    return encodeInboxCursor(inboxSortKey(card), order);
  }

  public async closeCard(
    runId: string,
    because: CardClosing,
    options: { expectWaitId?: string | null } = {},
  ): Promise<CardCloseOutcome> {
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
    // The card as it was tells whether this closing is the one that closed it, and its turn and
    // groups, which the `Card Closed` event names (issue #23).
    const outcome = await this.updateCard(runId, update, waitCondition, 'ALL_OLD');
    if (outcome.kind === 'condition-failed') {
      // No card: nothing is in the inbox, which is what closing wants. A card holding another
      // wait's token is not this caller's to close.
      if (waitCondition === undefined) return { kind: 'not-open' };
      return (await this.getCard(runId)) === undefined ? { kind: 'not-open' } : outcome;
    }
    await this.unindexEntry(runId);
    const closed = outcome.attributes ?? {};
    // `waiting`: an open card written before card version 2. Only the first closing saw it open.
    const wasUndecided = closed.state === 'open' || closed.state === 'waiting';
    const groups = z.safeParse(z.array(z.string()), closed.approverGroups);
    return wasUndecided && typeof closed.turn === 'number'
      ? { kind: 'closed', turn: closed.turn, approverGroups: groups.success ? groups.data : [] }
      : { kind: 'not-open' };
  }

  /**
   * Takes the card's approver entry out of the inbox index (REMOVE of the index key: a sparse
   * index drops it). Conditional, so closing never creates an entry that was never there.
   */
  private async unindexEntry(runId: string): Promise<void> {
    const update = new UpdateExpression()
      .remove(INBOX.partitionKey)
      .remove(INBOX.sortKey)
      .setWhenDefined(TABLE_LAYOUT.timeToLiveAttribute, this.table.endedRunRemoval());
    await this.updateIfPresent(approverEntryItemKey(runId), update);
  }

  /** Applies `update` to the item at `key` if it exists; whether it did. */
  private async updateIfPresent(key: ItemKey, update: UpdateExpression): Promise<boolean> {
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: key,
          ...update.toInput(`attribute_exists(${update.name(PK)})`),
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return false;
    }
  }
}
