import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import {
  type ApprovalRecord,
  approvalRecordSchema,
  type DecisionClaim,
  type DecisionRecord,
  decisionRecordSchema,
  readableDecisionRecordSchema,
} from '../../core/approvals/decision-record.js';
import { isCardUndecided } from '../../core/approvals/stored-card.js';
import { CountersignError } from '../../core/errors.js';
import type {
  ApprovalLapse,
  ApprovalOutcome,
  ClaimOutcome,
  LapseOutcome,
  RunRepository,
} from '../../core/ports.js';
import { actHistoryKey } from './history-index.js';
import { shardOf, undeliveredPartition, undeliveredSortKey } from './inbox-index.js';
import { isConditionalCheckFailed, parseItem, withoutUndefined } from './item-codec.js';
import { putIfAbsent } from './put-if-absent.js';
import {
  approvalItemKey,
  assertTurn,
  cardItemKey,
  decisionItemKey,
  runFromKey,
  runIdOfPartition,
} from './run-item-keys.js';
import { encodeApprovalContent, encodeDelegatedApproval, readStoredCardItem } from './run-item-schemas.js';
import type { RunTable } from './run-table.js';
import { UpdateExpression } from './update-expression.js';

type DecisionMethods =
  | 'claimDecision'
  | 'getDecision'
  | 'recordApproval'
  | 'lapseApprovals'
  | 'markDecisionDelivered'
  | 'listUndeliveredDecisions';

const INBOX = TABLE_LAYOUT.inboxIndex;

/**
 * The decisions of `RunRepository` on DynamoDB: append-only decision and approval records in
 * the run's partition. A conditional put is the claim: the first decision for a turn wins, the
 * first approval of an approver stands. An approval or rejection is claimed with the inbox
 * index's `UNDELIVERED#<shard>` key (inbox-index.ts) until it is marked delivered.
 *
 * @example
 * const decisions = new DynamoDecisionStore(new RunTable(client, tableName, undefined, systemClock), 4);
 * const claim = await decisions.claimDecision(record);
 */
export class DynamoDecisionStore implements Pick<RunRepository, DecisionMethods> {
  public constructor(
    private readonly table: RunTable,
    private readonly inboxShards: number,
  ) {}

  public async claimDecision(record: DecisionClaim): Promise<ClaimOutcome> {
    const parsed = decisionRecordSchema.parse(record);
    assertTurn(parsed.turn);
    // A cancel is carried out by its own request (StopExecution): nothing waits for its delivery.
    const undelivered =
      parsed.decision === 'cancel'
        ? {}
        : {
            [INBOX.partitionKey]: undeliveredPartition(shardOf(parsed.runId, this.inboxShards)),
            [INBOX.sortKey]: undeliveredSortKey(parsed),
          };
    const claimed = await putIfAbsent(this.table.client, this.table.tableName, {
      ...withoutUndefined(parsed),
      ...withoutUndefined({ [TABLE_LAYOUT.timeToLiveAttribute]: this.table.decisionRemoval() }),
      // "Decided by me" lists it under who decided (the history index).
      ...actHistoryKey({ actor: parsed.decidedBy, at: parsed.decidedAt, ...parsed, kind: 'decision' }),
      ...undelivered,
      ...decisionItemKey(parsed.runId, parsed.turn),
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
    await putIfAbsent(this.table.client, this.table.tableName, {
      ...parsed,
      ...actHistoryKey({ actor: parsed.approvedBy, at: parsed.approvedAt, ...parsed, kind: 'approval' }),
      ...approvalItemKey(parsed.runId, parsed.turn, parsed.approvedBy),
    });
    const update = new UpdateExpression().addToSet('approvedBy', new Set([parsed.approvedBy]));
    let condition = cardWaitsAt(update, parsed);
    const qualified = parsed.actingFor !== undefined || parsed.content !== undefined;
    if (parsed.actingFor !== undefined) {
      const entry = encodeDelegatedApproval({ approver: parsed.approvedBy, actingFor: parsed.actingFor });
      update.addToSet('delegatedApprovals', new Set([entry]));
    }
    if (parsed.content !== undefined) {
      const entry = encodeApprovalContent({ approver: parsed.approvedBy, content: parsed.content });
      update.addToSet('approvalContents', new Set([entry]));
    }
    if (qualified) {
      // Such an approval's entries go in only for a person not counted yet: the first approval stands.
      const tally = update.name('approvedBy');
      condition += ` AND (attribute_not_exists(${tally}) OR NOT contains(${tally}, ${update.value(parsed.approvedBy)}))`;
    }
    try {
      const { Attributes: card } = await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: cardItemKey(parsed.runId),
          ...update.toInput(condition),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return tallyOf(card, parsed.approvedBy);
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      if (!qualified) return { kind: 'card-moved' };
      // Either the card moved, or this person was already counted: the tally as it stands.
      const { Item: card } = await this.table.client.send(
        new GetCommand({
          TableName: this.table.tableName,
          Key: cardItemKey(parsed.runId),
          ConsistentRead: true,
        }),
      );
      const current = card === undefined ? undefined : readStoredCardItem(card);
      const waits =
        current !== undefined &&
        isCardUndecided(current) &&
        current.turn === parsed.turn &&
        current.digest === parsed.digest &&
        (current.approvedBy ?? []).includes(parsed.approvedBy);
      return waits ? tallyOf(card, parsed.approvedBy) : { kind: 'card-moved' };
    }
  }

  public async markDecisionDelivered(runId: string, turn: number): Promise<void> {
    assertTurn(turn);
    const update = new UpdateExpression()
      .set('deliveredAt', this.table.now().toISOString())
      .remove(INBOX.partitionKey)
      .remove(INBOX.sortKey);
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: decisionItemKey(runId, turn),
          // Only a decision still undelivered: a delivered one keeps when it was first delivered.
          ...update.toInput(`attribute_exists(${update.name(INBOX.partitionKey)})`),
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  public async listUndeliveredDecisions(options: {
    decidedBefore: string;
    limit: number;
  }): Promise<DecisionRecord[]> {
    const outputs = await Promise.all(
      Array.from({ length: this.inboxShards }, (_unused, shard) =>
        this.table.client.send(
          new QueryCommand({
            TableName: this.table.tableName,
            IndexName: INBOX.name,
            KeyConditionExpression: '#inboxPk = :partition AND #inboxSk < :before',
            ExpressionAttributeNames: { '#inboxPk': INBOX.partitionKey, '#inboxSk': INBOX.sortKey },
            ExpressionAttributeValues: {
              ':partition': undeliveredPartition(shard),
              ':before': options.decidedBefore,
            },
            ScanIndexForward: true,
            Limit: options.limit,
          }),
        ),
      ),
    );
    const items = outputs
      .flatMap((output) => output.Items ?? [])
      .sort((left, right) => String(left[INBOX.sortKey]).localeCompare(String(right[INBOX.sortKey])))
      .slice(0, options.limit);
    // Read under the key it was stored under, as every run item is (run-item-keys.ts).
    return items.map((item) =>
      runFromKey(
        runIdOfPartition(item[TABLE_LAYOUT.partitionKey]),
        parseItem(readableDecisionRecordSchema, item, 'decision'),
      ),
    );
  }

  public async lapseApprovals(lapse: ApprovalLapse): Promise<LapseOutcome> {
    assertTurn(lapse.turn);
    const approvers = new Set(lapse.approvers);
    const update = new UpdateExpression()
      .deleteFromSet('approvedBy', approvers)
      .addToSet('lapsedApprovers', approvers);
    const delegated = (lapse.delegatedApprovals ?? []).filter((entry) => approvers.has(entry.approver));
    if (delegated.length > 0) {
      update.deleteFromSet('delegatedApprovals', new Set(delegated.map(encodeDelegatedApproval)));
    }
    const contents = (lapse.approvalContents ?? []).filter((entry) => approvers.has(entry.approver));
    if (contents.length > 0) {
      update.deleteFromSet('approvalContents', new Set(contents.map(encodeApprovalContent)));
    }
    const condition = cardWaitsAt(update, lapse);
    try {
      const { Attributes: card } = await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: cardItemKey(lapse.runId),
          ...update.toInput(condition),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return {
        kind: 'lapsed',
        approvedBy: sortedMembers(card?.approvedBy),
        lapsedApprovers: sortedMembers(card?.lapsedApprovers),
      };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { kind: 'card-moved' };
      throw error;
    }
  }

  public async getDecision(runId: string, turn: number): Promise<DecisionRecord | undefined> {
    assertTurn(turn);
    const { Item: item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: decisionItemKey(runId, turn),
        ConsistentRead: true,
      }),
    );
    return item ? parseItem(readableDecisionRecordSchema, item, 'decision') : undefined;
  }
}

/** The condition that the card is open at this turn and digest; `waiting`: open, before card version 2. */
function cardWaitsAt(update: UpdateExpression, at: { turn: number; digest: string }): string {
  return [
    `${update.name('state')} IN (${update.value('open')}, ${update.value('waiting')})`,
    `${update.name('turn')} = ${update.value(at.turn)}`,
    `${update.name('digest')} = ${update.value(at.digest)}`,
  ].join(' AND ');
}

/** The tally of a card item as an approval left it; a card that does not parse counts only this approver. */
function tallyOf(item: Record<string, unknown> | undefined, approver: string): ApprovalOutcome {
  const card = item === undefined ? undefined : readStoredCardItem(item);
  return {
    kind: 'recorded',
    approvedBy: card?.approvedBy ?? [approver],
    delegatedApprovals: card?.delegatedApprovals ?? [],
    approvalContents: card?.approvalContents ?? [],
  };
}

/** A string set attribute as a sorted list; absent (DynamoDB drops an emptied set): none. */
function sortedMembers(attribute: unknown): string[] {
  return attribute instanceof Set ? [...attribute].map(String).sort() : [];
}
