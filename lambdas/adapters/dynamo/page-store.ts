import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { CountersignError } from '../../core/errors.js';
import {
  PAGE_METADATA_FIELDS,
  PAGE_NOT_AVAILABLE,
  type Page,
  type PageMetadataField,
  type PageMetadataPatch,
  type PageStore,
  pageSchema,
} from '../../core/pages.js';
import { type Clock, systemClock } from '../../core/ports.js';
import { batchGetItems } from './batch-get-items.js';
import { queryPartitionPage } from './fixed-partition.js';
import { isConditionalCheckFailed, parseItem, withoutUndefined } from './item-codec.js';
import type { DynamoRepositoryProps } from './run-repository.js';
import { UpdateExpression } from './update-expression.js';

const PK = TABLE_LAYOUT.partitionKey;
const SK = TABLE_LAYOUT.sortKey;
const PAGES_PARTITION = 'PAGES';
const PAGE_PREFIX = 'PAGE#';

const pageKey = (pageId: string): Record<string, string> => ({
  [PK]: PAGES_PARTITION,
  [SK]: `${PAGE_PREFIX}${pageId}`,
});
// Built from the page schema's field types WITHOUT their defaults: zod 4 keeps a default
// under partial(), which turned every field a patch left out into "" (a silent wipe).
const metadataPatchSchema = z.strictObject(
  Object.fromEntries(
    PAGE_METADATA_FIELDS.map((field) => [field, z.optional(pageSchema.shape[field].def.innerType)]),
  ) as Record<PageMetadataField, z.ZodMiniOptional<z.ZodMiniString>>,
);

export interface DynamoPageStoreProps extends Pick<DynamoRepositoryProps, 'client' | 'tableName'> {
  /** Stamps `updatedAt`. @default systemClock */
  readonly clock?: Clock;
}

/**
 * `PageStore` on DynamoDB: the built-in content store, pages in the fixed partition `PAGES`
 * (item layout in `run-repository.ts`).
 *
 * @example
 * const pages = new DynamoPageStore({ client, tableName });
 * const page = await pages.updateMetadata('home', { title: 'Welcome' }, 'alice');
 */
export class DynamoPageStore implements PageStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly clock: Clock;

  public constructor(props: DynamoPageStoreProps) {
    this.client = props.client;
    this.tableName = props.tableName;
    this.clock = props.clock ?? systemClock;
  }

  public async getPage(pageId: string): Promise<Page | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: pageKey(pageId), ConsistentRead: true }),
    );
    return item ? parseItem(pageSchema, item, 'page') : undefined;
  }

  public async getPages(pageIds: readonly string[]): Promise<Map<string, Page>> {
    const items = await batchGetItems(
      this.client,
      this.tableName,
      [...new Set(pageIds)].map(pageKey),
      'Pages',
    );
    const pages = new Map<string, Page>();
    for (const item of items) {
      const page = parseItem(pageSchema, item, 'page');
      pages.set(page.pageId, page);
    }
    return pages;
  }

  public async listPages(options: {
    limit: number;
    cursor?: string;
  }): Promise<{ pages: Page[]; cursor?: string }> {
    const { items, cursor } = await queryPartitionPage(
      this.client,
      this.tableName,
      { partition: PAGES_PARTITION, sortKeyPrefix: PAGE_PREFIX },
      options,
    );
    const pages = items.map((item) => parseItem(pageSchema, item, 'page'));
    return cursor === undefined ? { pages } : { pages, cursor };
  }

  public async updateMetadata(pageId: string, patch: PageMetadataPatch, updatedBy: string): Promise<Page> {
    const parsedPatch = metadataPatchSchema.safeParse(patch);
    if (!parsedPatch.success) {
      const field = parsedPatch.error.issues[0]?.path.join('.') || undefined;
      throw new CountersignError('bad-request', 'The page metadata is not valid.', field ? { field } : {});
    }
    const update = new UpdateExpression()
      .set('updatedAt', this.clock.now().toISOString())
      .set('updatedBy', updatedBy)
      .setAll(withoutUndefined(parsedPatch.data));
    try {
      const { Attributes: written } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: pageKey(pageId),
          ...update.toInput(`attribute_exists(${update.name(PK)})`),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return parseItem(pageSchema, written ?? {}, 'page');
    } catch (error) {
      // The same neutral text as a tool's "not found": the store never tells more than the tool.
      if (isConditionalCheckFailed(error)) throw new CountersignError('not-found', PAGE_NOT_AVAILABLE);
      throw error;
    }
  }

  public async putPage(page: Page): Promise<void> {
    const parsed = pageSchema.parse(page);
    await this.client.send(
      new PutCommand({ TableName: this.tableName, Item: { ...parsed, ...pageKey(parsed.pageId) } }),
    );
  }
}
