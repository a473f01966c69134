import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import type { ConditionalOutcome, PageRequest } from '../../core/ports.js';
import {
  type SkillAuditEntry,
  type SkillRecord,
  type SkillRepository,
  skillAuditEntrySchema,
  skillRecordSchema,
} from '../../core/skills/skill-record.js';
import { batchGetItems } from '../dynamo/batch-get-items.js';
import { queryPartitionPage, queryWholePartition } from '../dynamo/fixed-partition.js';
import { isConditionalCheckFailed, parseItem, withoutUndefined } from '../dynamo/item-codec.js';
import { putIfAbsent } from '../dynamo/put-if-absent.js';
import { UpdateExpression } from '../dynamo/update-expression.js';

const PARTITION = 'SKILLS';
const SORT_KEY_PREFIX = 'SKILL#';
const SKILLS = { partition: PARTITION, sortKeyPrefix: SORT_KEY_PREFIX };
/** Record fields a later version may no longer have (a new body clears the review). */
const OPTIONAL_FIELDS = ['pinnedCommit', 'reviewedBy', 'reviewedAt', 'reviewedChecksum'] as const;

/**
 * `SkillRepository` on the single table: one item per skill in the fixed partition `SKILLS`
 * (sort key `SKILL#<skillId>`), its audit a list attribute on the same item. Each change is one
 * conditional write that sets the record and appends (`list_append`) its audit entries, so a
 * change is never stored without its audit, and no code path rewrites or shortens the list.
 * (dynalite has no TransactWriteItems, so one item is what makes this atomic in both modes.)
 *
 * @example
 * const skills = new DynamoSkillRepository({ client: documentClient, tableName });
 * await skills.saveSkill(record, undefined, [{ version: 1, at, actor: 'admin', action: 'ingested', bodyChecksum }]);
 */
export class DynamoSkillRepository implements SkillRepository {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;

  public constructor(props: { client: DynamoDBDocumentClient; tableName: string }) {
    this.client = props.client;
    this.tableName = props.tableName;
  }

  public async getSkill(skillId: string): Promise<SkillRecord | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(skillId), ConsistentRead: true }),
    );
    return item ? parseItem(skillRecordSchema, item, 'skill') : undefined;
  }

  public async getSkills(skillIds: readonly string[]): Promise<SkillRecord[]> {
    const keys = [...new Set(skillIds)].map((skillId) => this.key(skillId));
    const found = new Map<string, SkillRecord>();
    for (const item of await batchGetItems(this.client, this.tableName, keys, 'Skills')) {
      const record = parseItem(skillRecordSchema, item, 'skill');
      found.set(record.skillId, record);
    }
    return skillIds.flatMap((skillId) => {
      const record = found.get(skillId);
      return record ? [record] : [];
    });
  }

  public async listSkillsPage(options: PageRequest): Promise<{ items: SkillRecord[]; cursor?: string }> {
    const page = await queryPartitionPage(this.client, this.tableName, SKILLS, options);
    return { ...page, items: page.items.map((item) => parseItem(skillRecordSchema, item, 'skill')) };
  }

  public async listSkills(): Promise<SkillRecord[]> {
    const items = await queryWholePartition(this.client, this.tableName, PARTITION);
    return items.map((item) => parseItem(skillRecordSchema, item, 'skill'));
  }

  public async saveSkill(
    record: SkillRecord,
    expectedVersion: number | undefined,
    audit: readonly SkillAuditEntry[],
  ): Promise<ConditionalOutcome> {
    const parsed = skillRecordSchema.parse(record);
    const entries = audit.map((entry) => withoutUndefined(skillAuditEntrySchema.parse(entry)));
    if (expectedVersion === undefined) {
      const created = await putIfAbsent(this.client, this.tableName, {
        ...withoutUndefined(parsed),
        audit: entries,
        ...this.key(parsed.skillId),
      });
      return created ? { kind: 'written' } : { kind: 'condition-failed' };
    }
    const { skillId: _key, ...fields } = withoutUndefined(parsed);
    const update = new UpdateExpression().appendToList('audit', entries).setAll(fields);
    for (const field of OPTIONAL_FIELDS) if (parsed[field] === undefined) update.remove(field);
    const condition = `${update.name('version')} = ${update.value(expectedVersion)}`;
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(parsed.skillId),
          ...update.toInput(condition),
        }),
      );
      return { kind: 'written' };
    } catch (error) {
      if (isConditionalCheckFailed(error)) return { kind: 'condition-failed' };
      throw error;
    }
  }

  public async listAudit(skillId: string): Promise<SkillAuditEntry[]> {
    const { Item: item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: this.key(skillId),
        ConsistentRead: true,
        ProjectionExpression: '#audit',
        ExpressionAttributeNames: { '#audit': 'audit' },
      }),
    );
    const entries = Array.isArray(item?.audit) ? (item.audit as unknown[]) : [];
    return entries.map((entry) =>
      parseItem(skillAuditEntrySchema, entry as Record<string, unknown>, 'skill audit entry'),
    );
  }

  private key(skillId: string): Record<string, string> {
    return { [TABLE_LAYOUT.partitionKey]: PARTITION, [TABLE_LAYOUT.sortKey]: `${SORT_KEY_PREFIX}${skillId}` };
  }
}
