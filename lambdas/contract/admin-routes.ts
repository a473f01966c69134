import type * as zc from 'zod/v4/core';
import { approverAnalyticsQuerySchema } from '../core/analytics/read-approver-analytics.js';
import { attachSkillsRequestSchema } from '../core/skills/attach-skills.js';
import { ingestSummarySchema } from '../core/skills/ingest-skills.js';
import { enableSkillRequestSchema } from '../core/skills/review-skill.js';
import {
  ADMIN_COLLECTION_SCHEMAS,
  adminListQuerySchema,
  attachmentSchema,
  deletedSchema,
  ingestRequestSchema,
  skillSummarySchema,
  skillWithAuditSchema,
} from './admin-schemas.js';
import { approverAnalyticsSchema } from './analytics-schemas.js';
import { pagedListSchema } from './common-schemas.js';
import { adminItemPathParameters, attachmentPathParameters, skillPathParameters } from './path-parameters.js';
import { json } from './route-definition.js';

type AdminCollection = keyof typeof ADMIN_COLLECTION_SCHEMAS;

/**
 * The list, read and write routes of one admin collection, each its own manifest entry:
 * `list<Noun>s` (GET /admin/<collection>), `get<Noun>` and `put<Noun>` (GET and PUT
 * /admin/<collection>/{id}). The operationIds stay literal types and the schemas come in as their
 * own type parameters (not indexed by the collection's name), so each handler and the typed client
 * read the exact input and answer of each operation.
 */
function adminCollectionRoutes<
  const Collection extends AdminCollection,
  const Noun extends string,
  Body extends zc.$ZodType,
  Item extends zc.$ZodType,
  Page extends zc.$ZodType,
>(
  collection: Collection,
  noun: Noun,
  label: string,
  schemas: { readonly body: Body; readonly item: Item; readonly page: Page },
) {
  const item = `/admin/${collection}/{id}` as const;
  const itemPath = adminItemPathParameters(singularOf(collection));
  const admin = { function: 'api-admin', auth: 'jwt' } as const;
  return [
    {
      operationId: `list${noun}s`,
      method: 'GET',
      path: `/admin/${collection}`,
      ...admin,
      summary: `List ${label}s, paged.`,
      query: adminListQuerySchema,
      success: { 200: json(`A page of ${label}s.`, schemas.page) },
    },
    {
      operationId: `get${noun}`,
      method: 'GET',
      path: item,
      ...admin,
      summary: `Read one ${label}.`,
      ...itemPath,
      success: { 200: json(`The ${label}.`, schemas.item) },
    },
    {
      operationId: `put${noun}`,
      method: 'PUT',
      path: item,
      ...admin,
      summary: `Create or replace one ${label}; the body's id must equal the path's.`,
      ...itemPath,
      body: schemas.body,
      success: { 200: json(`The ${label} as stored.`, schemas.item) },
    },
  ] as const;
}

/** `delete<Noun>`: DELETE /admin/<collection>/{id}, for the collections whose items the API may delete. */
function adminDeleteRoute<const Collection extends AdminCollection, const Noun extends string>(
  collection: Collection,
  noun: Noun,
  label: string,
) {
  return {
    operationId: `delete${noun}`,
    method: 'DELETE',
    path: `/admin/${collection}/{id}`,
    function: 'api-admin',
    auth: 'jwt',
    summary: `Delete one ${label}.`,
    ...adminItemPathParameters(singularOf(collection)),
    success: { 200: json('What was deleted.', deletedSchema) },
    errors: [409],
  } as const;
}

/** What one item of a collection is called in a refusal: `slack-users` holds `slack-user`s. */
function singularOf(collection: AdminCollection): string {
  return collection.slice(0, -1);
}

const collections = ADMIN_COLLECTION_SCHEMAS;

/** Admin: configurations, tasks, users, pages and Slack user links (GET lists are paged with ?limit=&cursor=). */
export const ADMIN_COLLECTION_ROUTES = [
  ...adminCollectionRoutes('configurations', 'Configuration', 'configuration', collections.configurations),
  adminDeleteRoute('configurations', 'Configuration', 'configuration'),
  ...adminCollectionRoutes('tasks', 'Task', 'task', collections.tasks),
  adminDeleteRoute('tasks', 'Task', 'task'),
  ...adminCollectionRoutes('users', 'User', 'user', collections.users),
  adminDeleteRoute('users', 'User', 'user'),
  // Pages belong to the content store: the API edits them and never deletes one.
  ...adminCollectionRoutes('pages', 'Page', 'page', collections.pages),
  // Admin: which Slack user acts as which countersign user (docs/approvers.md, "Slack").
  ...adminCollectionRoutes('slack-users', 'SlackUser', 'Slack user link', collections['slack-users']),
  adminDeleteRoute('slack-users', 'SlackUser', 'Slack user link'),
] as const;

const admin = { function: 'api-admin', auth: 'jwt' } as const;

/** Admin: approver analytics, and skills (docs/skills.md): ingest, review, enable, attach. */
export const ADMIN_READ_ROUTES = [
  // Admin: approver analytics, per group and per approver (issue #25; docs/runbook.md).
  {
    operationId: 'getApproverAnalytics',
    method: 'GET',
    path: '/admin/approver-analytics',
    ...admin,
    summary:
      'Approver analytics (admin): per approver group and per approver, the time from a card appearing to the answer, the share of approvals within `quickSeconds`, the reject rate.',
    query: approverAnalyticsQuerySchema,
    success: { 200: json('Statistics over the last `days`.', approverAnalyticsSchema) },
  },
  {
    operationId: 'listSkills',
    method: 'GET',
    path: '/admin/skills',
    ...admin,
    summary: 'List skills without their bodies, paged.',
    query: adminListQuerySchema,
    success: { 200: json('A page of skills.', pagedListSchema(skillSummarySchema)) },
  },
  {
    operationId: 'getSkill',
    method: 'GET',
    path: '/admin/skills/{skillId}',
    ...admin,
    summary: 'One skill with its body and its audit.',
    ...skillPathParameters,
    success: { 200: json('The skill and its audit.', skillWithAuditSchema) },
  },
  {
    operationId: 'ingestSkills',
    method: 'POST',
    path: '/admin/skills/ingest',
    ...admin,
    summary: 'Ingest skills from an upload or a GitHub source; new and changed skills arrive disabled.',
    body: ingestRequestSchema,
    success: { 200: json('What the ingest did, by skill id.', ingestSummarySchema) },
    errors: [409],
  },
  {
    operationId: 'enableSkill',
    method: 'POST',
    path: '/admin/skills/{skillId}/enable',
    ...admin,
    summary: 'Enable a skill whose reviewed body checksum is given.',
    ...skillPathParameters,
    body: enableSkillRequestSchema,
    success: { 200: json('The skill.', skillSummarySchema) },
    errors: [409],
  },
  {
    operationId: 'disableSkill',
    method: 'POST',
    path: '/admin/skills/{skillId}/disable',
    ...admin,
    summary: 'Disable a skill.',
    ...skillPathParameters,
    success: { 200: json('The skill.', skillSummarySchema) },
    errors: [409],
  },
  {
    operationId: 'attachSkills',
    method: 'PUT',
    path: '/admin/skills/attachments/{owner}/{id}',
    ...admin,
    summary: 'Set the skills attached to a task or a configuration, in order.',
    ...attachmentPathParameters,
    body: attachSkillsRequestSchema,
    success: { 200: json('The attached skills.', attachmentSchema) },
    errors: [409],
  },
] as const;
