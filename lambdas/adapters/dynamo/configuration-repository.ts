import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import {
  type Configuration,
  type ConfigurationRepository,
  configurationSchema,
  type Task,
  taskSchema,
} from '../../core/configurations.js';
import type { PageRequest } from '../../core/ports.js';
import { queryPartitionPage, queryWholePartition } from './fixed-partition.js';
import { parseItem, withoutUndefined } from './item-codec.js';
import type { DynamoRepositoryProps } from './run-repository.js';
import { TABLE_LAYOUT } from './table-layout.js';

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

  public constructor(props: Pick<DynamoRepositoryProps, 'client' | 'tableName'>) {
    this.client = props.client;
    this.tableName = props.tableName;
  }

  public getConfiguration(configurationId: string): Promise<Configuration | undefined> {
    return this.get(CONFIGURATIONS, configurationId);
  }

  public getTask(taskId: string): Promise<Task | undefined> {
    return this.get(TASKS, taskId);
  }

  public async putConfiguration(configuration: Configuration): Promise<void> {
    const parsed = configurationSchema.parse(configuration);
    await this.put(CONFIGURATIONS, parsed.configurationId, parsed);
  }

  public async putTask(task: Task): Promise<void> {
    const parsed = taskSchema.parse(task);
    await this.put(TASKS, parsed.taskId, parsed);
  }

  public listConfigurations(): Promise<Configuration[]> {
    return this.list(CONFIGURATIONS);
  }

  public listTasks(): Promise<Task[]> {
    return this.list(TASKS);
  }

  public listConfigurationsPage(options: PageRequest): Promise<{ items: Configuration[]; cursor?: string }> {
    return this.listPage(CONFIGURATIONS, options);
  }

  public listTasksPage(options: PageRequest): Promise<{ items: Task[]; cursor?: string }> {
    return this.listPage(TASKS, options);
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
  ): Promise<z.output<Schema> | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: this.key(kind, id) }),
    );
    return item ? parseItem(kind.schema, item, kind.what) : undefined;
  }

  private async put(kind: RecordKind<zc.$ZodType>, id: string, value: object): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...withoutUndefined(value), ...this.key(kind, id) },
      }),
    );
  }

  private async list<Schema extends zc.$ZodType>(kind: RecordKind<Schema>): Promise<z.output<Schema>[]> {
    const items = await queryWholePartition(this.client, this.tableName, kind.partition);
    return items.map((item) => parseItem(kind.schema, item, kind.what));
  }

  private async listPage<Schema extends zc.$ZodType>(
    kind: RecordKind<Schema>,
    options: PageRequest,
  ): Promise<{ items: z.output<Schema>[]; cursor?: string }> {
    const page = await queryPartitionPage(this.client, this.tableName, kind, options);
    return { ...page, items: page.items.map((item) => parseItem(kind.schema, item, kind.what)) };
  }

  private async delete(kind: RecordKind<zc.$ZodType>, id: string): Promise<boolean> {
    const { Attributes: previous } = await this.client.send(
      new DeleteCommand({ TableName: this.tableName, Key: this.key(kind, id), ReturnValues: 'ALL_OLD' }),
    );
    return previous !== undefined;
  }
}
