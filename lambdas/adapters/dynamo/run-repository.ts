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
 * | approver entry| `RUN#<runId>`     | `INBOX#@approvers`          | while waiting: `inboxPk = WAITING#@approvers#<shard>`, |
 * |               |                   |                             | `inboxSk = <pausedAt>#<runId>`, `approverGroups` (inbox-index.ts) |
 * | decision      | `RUN#<runId>`     | `DECISION#<turn, 6 digits>` | DecisionRecord fields; append-only audit;    |
 * |               |                   |                             | until delivered: `inboxPk = UNDELIVERED#<shard>`, |
 * |               |                   |                             | `inboxSk = <decidedAt>#<runId>`; then `deliveredAt` |
 * | approval      | `RUN#<runId>`     | `APPROVAL#<turn>#<userId>`  | ApprovalRecord fields (k-of-n); append-only  |
 * | call          | `RUN#<runId>`     | `CALL#<turn>#<index, 3 digits>` | CallRecord fields: the call ledger        |
 * |               |                   |                             | runs, decisions, approvals: `historyPk`/`historySk` (history-index.ts) |
 * | Slack message | `RUN#<runId>`     | `SLACK#<turn>#<channelId>`  | state, ts (slack-message-store.ts)           |
 * | card mail     | `RUN#<runId>`     | `MAIL#<turn>#<userId>`      | state (email-notification-store.ts)          |
 * | Slack request | `SLACK-SIGNATURE#<hex>` | `SLACK-SIGNATURE`     | a used signature, until its window passed    |
 * | Slack user    | `SLACK-USERS`     | `SLACK-USER#<slackUserId>`  | SlackUserMapping fields (admin)              |
 * | mail digest   | `EMAIL-DIGESTS`   | `DIGEST#<userId>`           | runIds (string set), lastSentAt              |
 * | user          | `USERS`           | `USER#<userId>`             | UserProfile fields                           |
 * | configuration | `CONFIGURATIONS`  | `CONFIGURATION#<id>`        | Configuration fields                         |
 * | task          | `TASKS`           | `TASK#<taskId>`             | Task fields                                  |
 * | page          | `PAGES`           | `PAGE#<pageId>`             | Page fields                                  |
 *
 * Ended runs, closed cards and (with a decision retention) decisions carry `removeAfter`, the
 * epoch seconds after which DynamoDB TTL may remove them (`run-table.ts`).
 *
 * Items are parsed back through the core's zod schemas. The inbox lists waiting cards with
 * one Query per shard of the viewer's route on the `inbox` index (and the pre-sharding
 * partition), whatever their groups, newest first, and one BatchGetItem of the cards; `closeCard` REMOVEs the index attributes so a closed card leaves
 * the index (a sparse index).
 *
 * One job a file: this one composes the repository and keeps the runs; the cards and the inbox
 * are in `approval-card-store.ts`, their escalation in `card-escalation-store.ts`, decisions and
 * approvals in `decision-store.ts`, the call ledger in `call-ledger-store.ts`, oversized state in
 * `sealed-state-overflow.ts`, keys in `run-item-keys.ts`, item schemas in
 * `run-item-schemas.ts`, the update-expression builder (shared with the skill and page stores) in
 * `update-expression.ts`.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { INBOX_SHARDS_DEFAULT, TABLE_LAYOUT } from '../../contract/table-layout.js';
import type { ApprovalRecord, DecisionClaim, DecisionRecord } from '../../core/approvals/decision-record.js';
import type { InboxOrder } from '../../core/approvals/inbox-filter.js';
import type { CardClosing, StoredCard } from '../../core/approvals/stored-card.js';
import { CountersignError } from '../../core/errors.js';
import {
  type ApprovalLapse,
  type ApprovalOutcome,
  type AuditTrail,
  type CardCloseOutcome,
  type ClaimOutcome,
  type Clock,
  type ConditionalOutcome,
  type EscalationChange,
  type EscalationOutcome,
  type LapseOutcome,
  type PageRequest,
  type RecordedAct,
  type RunRepository,
  type RunSummary,
  type StoredRun,
  systemClock,
  type WaitingCardsPage,
} from '../../core/ports.js';
import {
  type RunRecord,
  readableRunRecordSchema,
  runRecordSchema,
  TERMINAL_STATUSES,
} from '../../core/run-record.js';
import type { CallRecord, CallRecordExpectation } from '../../core/runs/call-record.js';
import type { BlobStore } from '../blob-store.js';
import { DynamoApprovalCardStore } from './approval-card-store.js';
import { DynamoCallLedgerStore } from './call-ledger-store.js';
import { DynamoCardEscalationStore } from './card-escalation-store.js';
import { DynamoDecisionStore } from './decision-store.js';
import { runHistoryKey } from './history-index.js';
import { DynamoHistoryStore } from './history-store.js';
import { assertInboxShards } from './inbox-index.js';
import { isConditionalCheckFailed, parseItem, withoutUndefined } from './item-codec.js';
import { putIfAbsent } from './put-if-absent.js';
import { runFromKey, runItemKey } from './run-item-keys.js';
import {
  parseRunUpdate,
  type RunChanges,
  type RunUpdateOptions,
  type WaitingCardsRequest,
} from './run-item-schemas.js';
import { type RunRetention, RunTable } from './run-table.js';
import { SealedStateOverflow, sealedStateAttributes, updateSealedState } from './sealed-state-overflow.js';
import { UpdateExpression } from './update-expression.js';

/** The table a store reads and writes, and the client it goes through. */
export type DynamoTableProps = Pick<DynamoRepositoryProps, 'client' | 'tableName'>;

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
  private readonly table: RunTable;
  private readonly overflow: SealedStateOverflow;
  private readonly cards: DynamoApprovalCardStore;
  private readonly decisions: DynamoDecisionStore;
  private readonly escalations: DynamoCardEscalationStore;
  private readonly history: DynamoHistoryStore;
  private readonly ledger: DynamoCallLedgerStore;

  public constructor(props: DynamoRepositoryProps) {
    const inboxShards = props.inboxShards ?? INBOX_SHARDS_DEFAULT;
    assertInboxShards(inboxShards);
    this.client = props.client;
    this.tableName = props.tableName;
    this.table = new RunTable(props.client, props.tableName, props.retention, props.clock ?? systemClock);
    this.overflow = new SealedStateOverflow(props.blobStore);
    this.cards = new DynamoApprovalCardStore(this.table, inboxShards);
    this.decisions = new DynamoDecisionStore(this.table, inboxShards);
    this.history = new DynamoHistoryStore(this.table);
    this.ledger = new DynamoCallLedgerStore(this.table);
    this.escalations = new DynamoCardEscalationStore(this.table, (runId) => this.cards.getCard(runId));
  }

  public async createRun(record: RunRecord, sealedState: Uint8Array): Promise<void> {
    const state = await this.overflow.store(record.runId, sealedState);
    const parsed = withoutUndefined(runRecordSchema.parse(record));
    const created = await putIfAbsent(this.client, this.tableName, {
      ...parsed,
      ...sealedStateAttributes(state),
      // "My runs" lists the run under its owner (the history index).
      ...runHistoryKey(parsed),
      ...runItemKey(record.runId),
    });
    if (!created) throw new CountersignError('conflict', 'A run with this id already exists.');
  }

  public async getRun(runId: string): Promise<StoredRun | undefined> {
    const item = await this.readRunItem(runId);
    return item ? this.storedRunOf(runId, item) : undefined;
  }

  /** A run item as the core reads it: its run id from the key, its sealed state loaded. */
  protected async storedRunOf(runId: string, item: Record<string, unknown>): Promise<StoredRun> {
    const record = runFromKey(runId, parseItem(readableRunRecordSchema, item, 'run'));
    return { record, sealedState: await this.overflow.load(runId, item) };
  }

  public async getRunRecord(runId: string): Promise<RunRecord | undefined> {
    const item = await this.readRunItem(runId);
    return item ? runFromKey(runId, parseItem(readableRunRecordSchema, item, 'run')) : undefined;
  }

  private async readRunItem(runId: string): Promise<Record<string, unknown> | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: runItemKey(runId), ConsistentRead: true }),
    );
    return item;
  }

  public async updateRun(
    runId: string,
    changes: RunChanges,
    options: RunUpdateOptions = {},
  ): Promise<ConditionalOutcome> {
    const update = parseRunUpdate(changes, options);
    if (update === undefined) return { kind: 'condition-failed' };

    // Setting runId to itself keeps the expression valid when nothing else changes.
    const expression = new UpdateExpression().set('runId', runId).setAll(update.changes);
    // The write that ends a run starts its retention (DynamoDB TTL removes it afterwards); the
    // write that puts a failed run back to work (a redrive) stops it.
    const status = update.changes.status;
    if (status !== undefined && TERMINAL_STATUSES.has(status)) {
      expression.setWhenDefined(TABLE_LAYOUT.timeToLiveAttribute, this.table.endedRunRemoval());
    } else if (status !== undefined) {
      expression.remove(TABLE_LAYOUT.timeToLiveAttribute);
    }
    for (const field of update.removeFields) expression.remove(field);
    if (options.sealedState) {
      updateSealedState(expression, await this.overflow.store(runId, options.sealedState));
    }

    let condition = `attribute_exists(${expression.name(TABLE_LAYOUT.partitionKey)})`;
    if (options.expectStatus) {
      const placeholders = options.expectStatus.map((expected) => expression.value(expected));
      condition += ` AND ${expression.name('status')} IN (${placeholders.join(', ')})`;
    }
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: runItemKey(runId),
          ...expression.toInput(condition),
        }),
      );
      return { kind: 'written' };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { kind: 'condition-failed' };
      throw error;
    }
  }

  public putCard(
    card: StoredCard,
    options?: { unlessClosedAtItsTurn?: boolean },
  ): Promise<ConditionalOutcome> {
    return this.cards.putCard(card, options);
  }

  public renewCardToken(
    runId: string,
    change: { turn: number; digest: string; sealedToken: Uint8Array; waitId: string },
  ): Promise<ConditionalOutcome> {
    return this.cards.renewCardToken(runId, change);
  }

  public markCardNotified(runId: string, turn: number): Promise<void> {
    return this.cards.markCardNotified(runId, turn);
  }

  public getCard(runId: string): Promise<StoredCard | undefined> {
    return this.cards.getCard(runId);
  }

  public listWaitingCards(options: WaitingCardsRequest): Promise<WaitingCardsPage> {
    return this.cards.listWaitingCards(options);
  }

  public waitingCardCursor(card: Pick<StoredCard, 'runId' | 'pausedAt'>, order?: InboxOrder): string {
    return this.cards.waitingCardCursor(card, order);
  }

  public closeCard(
    runId: string,
    because: CardClosing,
    options?: { expectWaitId?: string | null },
  ): Promise<CardCloseOutcome> {
    return this.cards.closeCard(runId, because, options);
  }

  public claimDecision(record: DecisionClaim): Promise<ClaimOutcome> {
    return this.decisions.claimDecision(record);
  }

  public recordApproval(approval: ApprovalRecord): Promise<ApprovalOutcome> {
    return this.decisions.recordApproval(approval);
  }

  public lapseApprovals(lapse: ApprovalLapse): Promise<LapseOutcome> {
    return this.decisions.lapseApprovals(lapse);
  }

  public getDecision(runId: string, turn: number): Promise<DecisionRecord | undefined> {
    return this.decisions.getDecision(runId, turn);
  }

  public readAuditTrail(runId: string): Promise<AuditTrail> {
    return this.history.readAuditTrail(runId);
  }

  public listActsOf(userId: string, page: PageRequest): Promise<{ items: RecordedAct[]; cursor?: string }> {
    return this.history.listActsOf(userId, page);
  }

  public listRunsOwnedBy(
    owner: string,
    page: PageRequest,
  ): Promise<{ items: RunSummary[]; cursor?: string }> {
    return this.history.listRunsOwnedBy(owner, page);
  }

  public markDecisionDelivered(runId: string, turn: number): Promise<void> {
    return this.decisions.markDecisionDelivered(runId, turn);
  }

  public listUndeliveredDecisions(options: {
    decidedBefore: string;
    limit: number;
  }): Promise<DecisionRecord[]> {
    return this.decisions.listUndeliveredDecisions(options);
  }

  public listCallRecords(runId: string, turn: number): Promise<CallRecord[]> {
    return this.ledger.listCallRecords(runId, turn);
  }

  public putCallRecord(record: CallRecord, expected: CallRecordExpectation): Promise<ConditionalOutcome> {
    return this.ledger.putCallRecord(record, expected);
  }

  public escalateCard(change: EscalationChange): Promise<EscalationOutcome> {
    return this.escalations.escalateCard(change);
  }

  public markEscalationNotified(change: EscalationChange): Promise<void> {
    return this.escalations.markEscalationNotified(change);
  }
}
