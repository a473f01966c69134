import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { routedGroupsOf } from '../../core/approvals/card-routing.js';
import type { StoredCard } from '../../core/approvals/stored-card.js';
import type { EscalationChange, EscalationOutcome, RunRepository } from '../../core/ports.js';
import { APPROVER_GROUPS_ATTRIBUTE, inboxSortKey } from './inbox-index.js';
import { isConditionalCheckFailed } from './item-codec.js';
import { approverEntryItemKey, cardItemKey, runFromKey } from './run-item-keys.js';
import { parseStoredCard } from './run-item-schemas.js';
import type { RunTable } from './run-table.js';
import { UpdateExpression } from './update-expression.js';

const INBOX = TABLE_LAYOUT.inboxIndex;

type EscalationMethods = 'escalateCard' | 'markEscalationNotified';

/**
 * Card escalation on DynamoDB: the card's `escalation.reached` moves on with a conditional write
 * (open at the timer's turn and digest, not yet past the step), and the card's one approver entry
 * in the inbox index names the groups it reaches now (its own and those the step added).
 *
 * The entry's groups are written BEFORE the card routes to them (the inbox checks every card it
 * reads against the card's own routing, so an entry naming a group early shows nothing), and only
 * while the entry is this card's (its sort key names the pause): a closed card's entry is out of
 * the index, and a later card's entry is never touched. A group left on an entry by a routing
 * write that then failed shows nothing either, for the same reason.
 *
 * @example
 * const escalations = new DynamoCardEscalationStore(table, (runId) => cards.getCard(runId));
 * await escalations.escalateCard({ runId, turn: 2, digest, step: 0 });
 */
export class DynamoCardEscalationStore implements Pick<RunRepository, EscalationMethods> {
  public constructor(
    private readonly table: RunTable,
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
    const before = routedGroupsOf(card);
    const after = routedGroupsOf(escalated);
    if (after.length > before.length) await this.routeEntry(card, after);
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

  /** The card's approver entry names `groups`, while the entry is this card's and in the index. */
  private async routeEntry(card: StoredCard, groups: readonly string[]): Promise<void> {
    const update = new UpdateExpression().set(APPROVER_GROUPS_ATTRIBUTE, [...groups]);
    try {
      await this.table.client.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: approverEntryItemKey(card.runId),
          ...update.toInput(`${update.name(INBOX.sortKey)} = ${update.value(inboxSortKey(card))}`),
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }
}

function waitsAt(card: StoredCard, change: EscalationChange): boolean {
  return card.state === 'open' && card.turn === change.turn && card.digest === change.digest;
}
