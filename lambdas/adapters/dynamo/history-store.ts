import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import {
  type ApprovalRecord,
  type DecisionRecord,
  readableApprovalRecordSchema,
  readableDecisionRecordSchema,
} from '../../core/approvals/decision-record.js';
import type { StoredCard } from '../../core/approvals/stored-card.js';
import type { AuditTrail, PageRequest, RecordedAct, RunRepository, RunSummary } from '../../core/ports.js';
import { RUN_STATUSES, runSummarySchema } from '../../core/run-record.js';
import { batchGetItems } from './batch-get-items.js';
import { actorPartition, decodeHistoryCursor, encodeHistoryCursor, ownerPartition } from './history-index.js';
import { assertPageLimit, parseItem } from './item-codec.js';
import { CARD_SORT_KEY, runFromKey, runIdOfPartition, runItemKey } from './run-item-keys.js';
import { readStoredCardItem } from './run-item-schemas.js';
import type { RunTable } from './run-table.js';

const PK = TABLE_LAYOUT.partitionKey;
const SK = TABLE_LAYOUT.sortKey;
const HISTORY = TABLE_LAYOUT.historyIndex;

type HistoryMethods = 'readAuditTrail' | 'listActsOf' | 'listRunsOwnedBy';

/** An act as the history index projects it. */
const actItemSchema = z.object({
  runId: z.string(),
  turn: z.number(),
  digest: z.string(),
  decision: z.optional(z.enum(['approve', 'reject', 'cancel'])),
  decidedAt: z.optional(z.string()),
  approvedAt: z.optional(z.string()),
});

/**
 * The history of `RunRepository` on DynamoDB (issue #21): a run's audit trail from its own
 * partition (one Query from `APPROVAL#` to `DECISION#`, which holds the card between them), and
 * the lists of the history index (history-index.ts), one Query a page.
 *
 * @example
 * const history = new DynamoHistoryStore(new RunTable(client, tableName, undefined, systemClock));
 * const { items, cursor } = await history.listActsOf('ana', { limit: 20 });
 */
export class DynamoHistoryStore implements Pick<RunRepository, HistoryMethods> {
  public constructor(private readonly table: RunTable) {}

  public async readAuditTrail(runId: string): Promise<AuditTrail> {
    const trail: AuditTrail = { decisions: [], approvals: [] };
    let start: Record<string, unknown> | undefined;
    do {
      const output: QueryCommandOutput = await this.table.client.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :first AND :last',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: {
            ':pk': runItemKey(runId)[PK],
            ':first': 'APPROVAL#',
            ':last': 'DECISION#~',
          },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of output.Items ?? []) addToTrail(trail, runId, item);
      start = output.LastEvaluatedKey;
    } while (start);
    return trail;
  }

  public async listActsOf(
    userId: string,
    page: PageRequest,
  ): Promise<{ items: RecordedAct[]; cursor?: string }> {
    const { items: indexed, cursor } = await this.queryHistory(actorPartition(userId), page);
    const acts = indexed.map((item) => {
      const act = parseItem(actItemSchema, item, 'decision');
      const kind: RecordedAct['kind'] = act.decision === undefined ? 'approval' : 'decision';
      return {
        kind,
        runId: act.runId,
        turn: act.turn,
        at: act.decidedAt ?? act.approvedAt ?? '',
        digest: act.digest,
        ...(act.decision === undefined ? {} : { decision: act.decision }),
      };
    });
    // The runs' labels and statuses as they are now: one read, only the attributes shown.
    const runIds = [...new Set(acts.map((act) => act.runId))];
    const runs = await batchGetItems(
      this.table.client,
      this.table.tableName,
      runIds.map(runItemKey),
      'The runs of a history page',
      [PK, 'label', 'status'],
    );
    const byRun = new Map(runs.map((item) => [runIdOfPartition(item[PK]), item]));
    const items = acts.map((act): RecordedAct => {
      const run = byRun.get(act.runId);
      const status = RUN_STATUSES.find((candidate) => candidate === run?.status);
      return run && typeof run.label === 'string' && status
        ? { ...act, run: { label: run.label, status } }
        : act;
    });
    return { items, ...(cursor ? { cursor } : {}) };
  }

  public async listRunsOwnedBy(
    owner: string,
    page: PageRequest,
  ): Promise<{ items: RunSummary[]; cursor?: string }> {
    const { items, cursor } = await this.queryHistory(ownerPartition(owner), page);
    return {
      items: items.map((item) =>
        runFromKey(runIdOfPartition(item[PK]), parseItem(runSummarySchema, item, 'run')),
      ),
      ...(cursor ? { cursor } : {}),
    };
  }

  /** One page of a history partition, newest first, below the cursor's position. */
  private async queryHistory(
    partition: string,
    page: PageRequest,
  ): Promise<{ items: Record<string, unknown>[]; cursor?: string }> {
    assertPageLimit(page.limit);
    const before = page.cursor === undefined ? undefined : decodeHistoryCursor(page.cursor);
    const output = await this.table.client.send(
      new QueryCommand({
        TableName: this.table.tableName,
        IndexName: HISTORY.name,
        KeyConditionExpression:
          before === undefined ? '#hpk = :partition' : '#hpk = :partition AND #hsk < :before',
        ExpressionAttributeNames: {
          '#hpk': HISTORY.partitionKey,
          ...(before === undefined ? {} : { '#hsk': HISTORY.sortKey }),
        },
        ExpressionAttributeValues: {
          ':partition': partition,
          ...(before === undefined ? {} : { ':before': before }),
        },
        ScanIndexForward: false,
        // One more than the page: a cursor only when something follows it.
        Limit: page.limit + 1,
      }),
    );
    const items = (output.Items ?? []).slice(0, page.limit);
    const last = items.at(-1)?.[HISTORY.sortKey];
    const more = (output.Items ?? []).length > page.limit;
    return { items, ...(more && typeof last === 'string' ? { cursor: encodeHistoryCursor(last) } : {}) };
  }
}

function addToTrail(trail: AuditTrail, runId: string, item: Record<string, unknown>): void {
  const sortKey = String(item[SK]);
  if (sortKey === CARD_SORT_KEY) {
    const card: StoredCard | undefined = readStoredCardItem(item);
    // A card that does not parse routes to nobody: only the owner and admins read the audit.
    if (card) trail.card = runFromKey(runId, card);
  } else if (sortKey.startsWith('DECISION#')) {
    trail.decisions.push(
      runFromKey(runId, parseItem(readableDecisionRecordSchema, item, 'decision')) as DecisionRecord,
    );
  } else if (sortKey.startsWith('APPROVAL#')) {
    trail.approvals.push(
      runFromKey(runId, parseItem(readableApprovalRecordSchema, item, 'approval')) as ApprovalRecord,
    );
  }
}
