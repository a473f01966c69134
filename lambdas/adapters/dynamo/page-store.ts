import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { TABLE_LAYOUT } from '../../contract/table-layout.js';
import { CountersignError } from '../../core/errors.js';
import {
  PAGE_APPLIED_KEYS_KEPT,
  PAGE_METADATA_FIELDS,
  PAGE_NOT_AVAILABLE,
  type Page,
  type PageExpectation,
  type PageMetadataField,
  type PageMetadataPatch,
  type PageMetadataWrite,
  type PageStore,
  type PageWriteOutcome,
  pageSchema,
} from '../../core/pages.js';
import { type Clock, systemClock } from '../../core/ports.js';
import { batchGetItems } from './batch-get-items.js';
import { queryPartitionPage } from './fixed-partition.js';
import { isConditionalCheckFailed, parseItem, withoutUndefined } from './item-codec.js';
import type { DynamoTableProps } from './run-repository.js';
import { UpdateExpression } from './update-expression.js';

const PK = TABLE_LAYOUT.partitionKey;
const SK = TABLE_LAYOUT.sortKey;
const PAGES_PARTITION = 'PAGES';
const PAGE_PREFIX = 'PAGE#';
/** The idempotency keys of the tool calls a page applied, oldest first (a list: it keeps order). */
const APPLIED_KEYS = 'appliedKeys';

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

export interface DynamoPageStoreProps extends DynamoTableProps {
  /** Stamps `updatedAt`. @default systemClock */
  readonly clock?: Clock;
}

/**
 * `PageStore` on DynamoDB: the built-in content store, pages in the fixed partition `PAGES`
 * (item layout in `run-repository.ts`). A tool's write is one conditional UpdateItem: the page
 * keeps the idempotency keys it applied (`appliedKeys`, a list trimmed to the newest 32 once it
 * holds 64), and an expected field value is part of the condition, not a read before it.
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
    const update = new UpdateExpression()
      .set('updatedAt', this.clock.now().toISOString())
      .set('updatedBy', updatedBy)
      .setAll(parsePatch(patch));
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

  public async applyMetadata(pageId: string, write: PageMetadataWrite): Promise<PageWriteOutcome> {
    const update = new UpdateExpression()
      .set('updatedAt', this.clock.now().toISOString())
      .set('updatedBy', write.updatedBy)
      .setAll(parsePatch(write.patch))
      .appendToList(APPLIED_KEYS, [write.idempotencyKey]);
    const condition = [
      `attribute_exists(${update.name(PK)})`,
      `NOT contains(${update.name(APPLIED_KEYS)}, ${update.value(write.idempotencyKey)})`,
      ...expectationConditions(update, write.expect ?? {}),
    ].join(' AND ');
    let written: Record<string, unknown>;
    try {
      const output = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: pageKey(pageId),
          ...update.toInput(condition),
          ReturnValues: 'ALL_NEW',
        }),
      );
      written = output.Attributes ?? {};
    } catch (error) {
      if (isConditionalCheckFailed(error)) return this.explainRefusedWrite(pageId, write.idempotencyKey);
      throw error;
    }
    await this.trimAppliedKeys(pageId, written[APPLIED_KEYS]);
    return { kind: 'written', page: parseItem(pageSchema, written, 'page') };
  }

  /** Why a conditional write was refused, read back once: gone, applied before, or changed. */
  private async explainRefusedWrite(pageId: string, idempotencyKey: string): Promise<PageWriteOutcome> {
    const { Item: item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: pageKey(pageId), ConsistentRead: true }),
    );
    if (!item) return { kind: 'not-found' };
    const applied = item[APPLIED_KEYS];
    // The key wins over `expect`: the call's own earlier write is what changed the fields.
    if (Array.isArray(applied) && applied.includes(idempotencyKey)) {
      return { kind: 'already-applied', page: parseItem(pageSchema, item, 'page') };
    }
    return { kind: 'record-changed' };
  }

  /**
   * Keeps the applied keys bounded: past twice {@link PAGE_APPLIED_KEYS_KEPT}, the oldest go, in
   * one more write every 32 writes of the page. A failed trim only leaves the list longer for
   * the next write to trim: the page's write already stands, so it is not failed for it.
   */
  private async trimAppliedKeys(pageId: string, applied: unknown): Promise<void> {
    if (!Array.isArray(applied) || applied.length <= 2 * PAGE_APPLIED_KEYS_KEPT) return;
    const update = new UpdateExpression().removeListHead(
      APPLIED_KEYS,
      applied.length - PAGE_APPLIED_KEYS_KEPT,
    );
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: pageKey(pageId),
          ...update.toInput(
            `size(${update.name(APPLIED_KEYS)}) > ${update.value(2 * PAGE_APPLIED_KEYS_KEPT)}`,
          ),
        }),
      );
    } catch {
      // See above: the next write trims.
    }
  }

  public async putPage(page: Page): Promise<void> {
    const parsed = pageSchema.parse(page);
    await this.client.send(
      new PutCommand({ TableName: this.tableName, Item: { ...parsed, ...pageKey(parsed.pageId) } }),
    );
  }
}

/** A patch as the store takes it: only the metadata fields, each bounded; a 400 naming the field otherwise. */
function parsePatch(patch: PageMetadataPatch): Record<string, string> {
  const parsedPatch = metadataPatchSchema.safeParse(patch);
  if (!parsedPatch.success) {
    const field = parsedPatch.error.issues[0]?.path.join('.') || undefined;
    throw new CountersignError('bad-request', 'The page metadata is not valid.', field ? { field } : {});
  }
  return withoutUndefined(parsedPatch.data) as Record<string, string>;
}

/** `expect` as conditions: an expected empty value also matches a field the item never had. */
function expectationConditions(update: UpdateExpression, expect: PageExpectation): string[] {
  return Object.entries(expect).flatMap(([field, value]) => {
    if (value === undefined) return [];
    const name = update.name(field);
    const equals = `${name} = ${update.value(value)}`;
    return [value === '' ? `(attribute_not_exists(${name}) OR ${equals})` : equals];
  });
}
