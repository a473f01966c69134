import * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import { slackUserMappingSchema } from '../core/channels/slack-ports.js';
import { configurationSchema, taskSchema } from '../core/configurations.js';
import { adminUserProfileSchema, userProfileSchema } from '../core/identity.js';
import { pageSchema } from '../core/pages.js';
import { gitHubIngestSchema, skillUploadSchema } from '../core/skills/skill-ingest-requests.js';
import { type SkillSummary, skillAuditEntrySchema, skillRecordSchema } from '../core/skills/skill-record.js';
import { type Agrees, pagedListSchema, pageQuerySchema, type SameShape } from './common-schemas.js';

/** Every admin list is paged: `?limit=` (1 to 100, default 100) and the opaque `cursor` of the last page. */
export const ADMIN_PAGE_SIZE_MAX = 100;
export const adminListQuerySchema = pageQuerySchema(ADMIN_PAGE_SIZE_MAX, ADMIN_PAGE_SIZE_MAX);

/** POST /admin/skills/ingest: an upload or a GitHub source, strict at every depth. */
export const ingestRequestSchema = z.discriminatedUnion('source', [skillUploadSchema, gitHubIngestSchema]);

/**
 * A stored record carries `unknownKeys` beside its fields when it holds keys today's schema does
 * not know: reported to the admin, never reinterpreted.
 */
const unknownKeys = { unknownKeys: z.optional(z.array(z.string())) };
const storedConfigurationSchema = z.extend(configurationSchema, unknownKeys);
const storedTaskSchema = z.extend(taskSchema, unknownKeys);

/**
 * The schemas of one admin collection: the PUT body, strict at every depth (an unknown key is a
 * 400 naming its path), the item as the API answers it, and a page of items.
 */
function adminCollectionSchemas<Shape extends zc.$ZodShape, Item extends zc.$ZodType>(
  record: z.ZodMiniObject<Shape>,
  item: Item,
) {
  return { body: z.strictObject(record.shape), item, page: pagedListSchema(item) };
}

export const ADMIN_COLLECTION_SCHEMAS = {
  configurations: adminCollectionSchemas(configurationSchema, storedConfigurationSchema),
  tasks: adminCollectionSchemas(taskSchema, storedTaskSchema),
  // An admin writes a user's record without its delegation (PUT /users/{id}/away sets that).
  users: adminCollectionSchemas(adminUserProfileSchema, userProfileSchema),
  pages: adminCollectionSchemas(pageSchema, pageSchema),
  'slack-users': adminCollectionSchemas(slackUserMappingSchema, slackUserMappingSchema),
} as const;

export const deletedSchema = z.object({ deleted: z.string() });

/** A skill without its body (listings, enable, disable), with the body's size. */
export const skillSummarySchema = z.extend(z.omit(skillRecordSchema, { body: true }), {
  bodyBytes: z.number().check(z.int(), z.nonnegative()),
});

export const skillWithAuditSchema = z.object({
  skill: skillRecordSchema,
  audit: z.array(skillAuditEntrySchema),
});

export const attachmentSchema = z.object({
  target: z.object({ kind: z.enum(['task', 'configuration']), id: z.string() }),
  skillIds: z.array(z.string()),
});

/** Compile-time agreement of each response schema with the type its handler answers. */
export type AdminResponseShapesAgree = [Agrees<SameShape<z.output<typeof skillSummarySchema>, SkillSummary>>];
