import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { routedGroupsOf } from '../../core/approvals/card-routing.js';
import type { StoredCard } from '../../core/approvals/stored-card.js';
import type { EscalationChange, EscalationOutcome, RunRepository } from '../../core/ports.js';
import { inboxPartition, inboxSortKey, shardOf } from './inbox-index.js';
import { isConditionalCheckFailed } from './item-codec.js';
import { cardItemKey, inboxEntryItemKey, runFromKey } from './run-item-keys.js';
import { parseStoredCard } from './run-item-schemas.js';
import type { RunTable } from './run-table.js';
import { UpdateExpression } from './update-expression.js';

const INBOX = TABLE_LAYOUT.inboxIndex;

type EscalationMethods = 'escalateCard' | 'markEscalationNotified';

/**
 * Card escalation on DynamoDB: the card's `escalation.reached` moves on with a conditional write
 * (open at the timer's turn and digest, not yet past the step), and the inbox index lists the
 * card under the groups the step added (one entry item per group, as at the pause).
 *
 * The entries go in BEFORE the card routes to their groups (the inbox filters cards by their own
 * routing, so an entry early shows nothing), and each is written only over nothing or this
 * card's own entry (its sort key names the pause): a card closing meanwhile either reads the new
 * routes and removes the entries, or makes the routing write fail and the entries are taken back.
 * No orphan entry outlives its card, and no later card's entry is overwritten.
 *
 * @example
 * const escalations = new DynamoCardEscalationStore(table, 4, (runId) => cards.getCard(runId));
 * await escalations.escalateCard({ runId, turn: 2, digest, step: 0 });
 */
export class DynamoCardEscalationStore implements Pick<RunRepository, EscalationMethods> {
  public constructor(
    private readonly table: RunTable,
    private readonly inboxShards: number,
    private readonly getCard: (runId: string) => Promise<StoredCard | undefined>,
  ) {}

  public async escalateCard(change: EscalationChange): Promise<EscalationOutcome> {
    const card = await this.getCard(change.runId);
    const escalation = card?.escalation;
    if (!card || !escalation || !waitsAt(card, change) || escalation.reached > change.step) {
      return { kind: 'card-moved' };
    }
    if (escalation.steps[change.step] === undefined) return { kind: 'card-moved' };
    const escalated: StoredCard = { ...card, escalation: { ...escalation, reached: change.step + 1 } };
    const before = new Set(routedGroupsOf(card));
    const added = routedGroupsOf(escalated).filter((group) => !before.has(group));
    const written = await Promise.all(added.map((group) => this.putEntry(card, group)));
    const update = new UpdateExpression().setPath(['escalation', 'reached'], change.step + 1);
    const condition = [
      `${update.name('state')} = ${update.value('open')}`,
      `${update.name('turn')} = ${update.value(change.turn)}`,
      `${update.name('digest')} = ${update.value(change.digest)}`,
      `${update.path(['escalation', 'reached'])} = ${update.value(escalation.reached)}`,
    ].join(' AND ');
    try {
      const { Attributes: item } = await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: cardItemKey(change.runId),
          ...update.toInput(condition),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { kind: 'escalated', card: runFromKey(change.runId, parseStoredCard(item ?? {})) };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      // A repeated timer may have routed the same groups meanwhile: its entries stay.
      const current = await this.getCard(change.runId);
      const routed = new Set(current && waitsAt(current, change) ? routedGroupsOf(current) : []);
      await this.takeBackEntries(
        card,
        added.filter((group, position) => written[position] && !routed.has(group)),
      );
      return { kind: 'card-moved' };
    }
  }

  public async markEscalationNotified(change: EscalationChange): Promise<void> {
    const update = new UpdateExpression().setPath(['escalation', 'notified'], change.step + 1);
    const condition = [
      `${update.name('turn')} = ${update.value(change.turn)}`,
      `${update.name('digest')} = ${update.value(change.digest)}`,
      `${update.path(['escalation', 'notified'])} <= ${update.value(change.step)}`,
    ].join(' AND ');
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: cardItemKey(change.runId),
          ...update.toInput(condition),
        }),
      );
    } catch (error) {
      // Announced already (a repeated timer), or the card moved on: nothing left to record.
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /** The entry of one added group: written over nothing or this card's own entry; false when another card's is there. */
  private async putEntry(card: StoredCard, group: string): Promise<boolean> {
    const update = new UpdateExpression()
      .set(INBOX.partitionKey, inboxPartition(group, shardOf(card.runId, this.inboxShards)))
      .set(INBOX.sortKey, inboxSortKey(card));
    const sortKey = update.name(INBOX.sortKey);
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: inboxEntryItemKey(card.runId, group),
          ...update.toInput(
            `attribute_not_exists(${sortKey}) OR ${sortKey} = ${update.value(inboxSortKey(card))}`,
          ),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** The entries of a routing that did not happen: removed from the index if they are still this card's. */
  private async takeBackEntries(card: StoredCard, groups: readonly string[]): Promise<void> {
    await Promise.all(
      groups.map(async (group) => {
        const update = new UpdateExpression().remove(INBOX.partitionKey).remove(INBOX.sortKey);
        try {
          await this.table.client.send(
            new UpdateCommand({
              TableName: this.table.tableName,
              Key: inboxEntryItemKey(card.runId, group),
              ...update.toInput(`${update.name(INBOX.sortKey)} = ${update.value(inboxSortKey(card))}`),
            }),
          );
        } catch (error) {
          if (!isConditionalCheckFailed(error)) throw error;
        }
      }),
    );
  }
}

function waitsAt(card: StoredCard, change: EscalationChange): boolean {
  return card.state === 'open' && card.turn === change.turn && card.digest === change.digest;
}
