import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import {
  type Configuration,
  type ConfigurationRepository,
  configurationSchema,
  type StoredRecordReport,
  type Task,
  taskSchema,
} from '../../core/configurations.js';
import { CountersignError } from '../../core/errors.js';
import type { Logger, PageRequest } from '../../core/ports.js';
import { parseWithUnknownKeys } from '../../core/unknown-keys.js';
import { queryPartitionPage, queryWholePartition } from './fixed-partition.js';
import { withoutUndefined } from './item-codec.js';
import type { DynamoTableProps } from './run-repository.js';

interface RecordKind<Schema extends zc.$ZodType> {
  readonly partition: string;
  readonly sortKeyPrefix: string;
  readonly schema: Schema;
  readonly what: string;
}

const CONFIGURATIONS: RecordKind<typeof configurationSchema> = {
  partition: 'CONFIGURATIONS',
  sortKeyPrefix: 'CONFIGURATION#',
  schema: configurationSchema,
  what: 'configuration',
};
const TASKS: RecordKind<typeof taskSchema> = {
  partition: 'TASKS',
  sortKeyPrefix: 'TASK#',
  schema: taskSchema,
  what: 'task',
};

/**
 * `ConfigurationRepository` on DynamoDB: LLM configurations in the fixed partition
 * `CONFIGURATIONS`, tasks in `TASKS` (item layout in `run-repository.ts`).
 *
 * @example
 * const configurations = new DynamoConfigurationRepository({ client, tableName });
 * await configurations.putTask(task);
 */
export class DynamoConfigurationRepository implements ConfigurationRepository {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly logger: Logger | undefined;

  /**
   * @param props.logger where a stored record with unknown keys is reported on every read
   *   @default - not reported on reads (the admin GET still names the keys)
   */
  public constructor(props: DynamoTableProps & { readonly logger?: Logger }) {
    this.client = props.client;
    this.tableName = props.tableName;
    this.logger = props.logger;
  }

  public async getConfiguration(configurationId: string): Promise<Configuration | undefined> {
    return (await this.inspectConfiguration(configurationId))?.value;
  }

  public async getTask(taskId: string): Promise<Task | undefined> {
    return (await this.inspectTask(taskId))?.value;
  }

  public inspectConfiguration(
    configurationId: string,
  ): Promise<StoredRecordReport<Configuration> | undefined> {
    return this.get(CONFIGURATIONS, configurationId);
  }

  public inspectTask(taskId: string): Promise<StoredRecordReport<Task> | undefined> {
    return this.get(TASKS, taskId);
  }

  public inspectConfigurationsPage(
    options: PageRequest,
  ): Promise<{ items: StoredRecordReport<Configuration>[]; cursor?: string }> {
    return this.listPage(CONFIGURATIONS, options);
  }

  public inspectTasksPage(
    options: PageRequest,
  ): Promise<{ items: StoredRecordReport<Task>[]; cursor?: string }> {
    return this.listPage(TASKS, options);
  }

  public async putConfiguration(configuration: Configuration): Promise<void> {
    const parsed = configurationSchema.parse(configuration);
    await this.put(CONFIGURATIONS, parsed.configurationId, parsed);
  }

  public async putTask(task: Task): Promise<void> {
    const parsed = taskSchema.parse(task);
    await this.put(TASKS, parsed.taskId, parsed);
  }

  public async listConfigurations(): Promise<Configuration[]> {
    return (await this.list(CONFIGURATIONS)).map((report) => report.value);
  }

  public async listTasks(): Promise<Task[]> {
    return (await this.list(TASKS)).map((report) => report.value);
  }

  public async listConfigurationsPage(
    options: PageRequest,
  ): Promise<{ items: Configuration[]; cursor?: string }> {
    const page = await this.listPage(CONFIGURATIONS, options);
    return { ...page, items: page.items.map((report) => report.value) };
  }

  public async listTasksPage(options: PageRequest): Promise<{ items: Task[]; cursor?: string }> {
    const page = await this.listPage(TASKS, options);
    return { ...page, items: page.items.map((report) => report.value) };
  }

  public deleteConfiguration(configurationId: string): Promise<boolean> {
    return this.delete(CONFIGURATIONS, configurationId);
  }

  public deleteTask(taskId: string): Promise<boolean> {
    return this.delete(TASKS, taskId);
  }

  private key(kind: RecordKind<zc.$ZodType>, id: string): Record<string, string> {
    return {
      [TABLE_LAYOUT.partitionKey]: kind.partition,
      [TABLE_LAYOUT.sortKey]: `${kind.sortKeyPrefix}${id}`,
    };
  }

  private async get<Schema extends zc.$ZodType>(
    kind: RecordKind<Schema>,
    id: string,
  ): Promise<StoredRecordReport<z.output<Schema>> | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(kind, id) }),
    );
    return item ? this.read(kind, item) : undefined;
  }

  /** A stored item through the strict schema: its key attributes aside, unknown keys are reported. */
  private read<Schema extends zc.$ZodType>(
    kind: RecordKind<Schema>,
    item: Record<string, unknown>,
  ): StoredRecordReport<z.output<Schema>> {
    const { [TABLE_LAYOUT.partitionKey]: _partition, [TABLE_LAYOUT.sortKey]: _sort, ...fields } = item;
    const parsed = parseWithUnknownKeys(kind.schema, fields);
    if (parsed.kind === 'invalid') {
      throw new CountersignError('internal', `A stored ${kind.what} has an unexpected shape.`, {
        expose: false,
      });
    }
    if (parsed.unknownKeys.length > 0) {
      this.logger?.warn(`stored ${kind.what} has unknown keys`, {
        id: String(_sort).slice(kind.sortKeyPrefix.length),
        unknownKeys: parsed.unknownKeys,
      });
    }
    return { value: parsed.value, unknownKeys: parsed.unknownKeys };
  }

  private async put(kind: RecordKind<zc.$ZodType>, id: string, value: object): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...withoutUndefined(value), ...this.key(kind, id) },
      }),
    );
  }

  private async list<Schema extends zc.$ZodType>(
    kind: RecordKind<Schema>,
  ): Promise<StoredRecordReport<z.output<Schema>>[]> {
    const items = await queryWholePartition(this.client, this.tableName, kind.partition);
    return items.map((item) => this.read(kind, item));
  }

  private async listPage<Schema extends zc.$ZodType>(
    kind: RecordKind<Schema>,
    options: PageRequest,
  ): Promise<{ items: StoredRecordReport<z.output<Schema>>[]; cursor?: string }> {
    const page = await queryPartitionPage(this.client, this.tableName, kind, options);
    return { ...page, items: page.items.map((item) => this.read(kind, item)) };
  }

  private async delete(kind: RecordKind<zc.$ZodType>, id: string): Promise<boolean> {
    const { Attributes: previous } = await this.client.send(
      new DeleteCommand({ TableName: this.tableName, Key: this.key(kind, id), ReturnValues: 'ALL_OLD' }),
    );
    return previous !== undefined;
  }
}
