import * as z from 'zod/mini';
import { configurationSchema, type StoredRecordReport, taskSchema } from '../../core/configurations.js';
import { CountersignError } from '../../core/errors.js';
import { isAdmin, type UserProfile, userProfileSchema } from '../../core/identity.js';
import { pageSchema } from '../../core/pages.js';
import type { PageRequest } from '../../core/ports.js';
import { countWaitingRuns } from '../../core/runs/count-waiting-runs.js';
import type { RunDependencies } from '../../core/runs/run-dependencies.js';
import { TEXTS } from '../../core/texts.js';
import type { HttpRequest, HttpResponse, RouteHandler } from '../http/http-route.js';
import { adminListQuerySchema, parseInput } from './request-parsing.js';
import { refuseUnreviewedSkillIds, routeSkills, type SkillsRouteDependencies } from './skills-routes.js';

/** What the admin routes read and write: no sealer, no model (the admin Lambda bundles neither). */
export type AdminDependencies = Pick<RunDependencies, 'configurations' | 'users' | 'pages' | 'runs'> &
  SkillsRouteDependencies;

/** ANY /admin/{proxy+}: configurations, tasks, users (grants and access) and pages. */
export function createAdminRoutes(dependencies: AdminDependencies): Record<string, RouteHandler> {
  return { 'ANY /admin/{proxy+}': (request) => routeAdmin(dependencies, request) };
}

const adminCollections = {
  configurations: { schema: configurationSchema, idField: 'configurationId' },
  tasks: { schema: taskSchema, idField: 'taskId' },
  users: { schema: userProfileSchema, idField: 'userId' },
  pages: { schema: pageSchema, idField: 'pageId' },
} as const;

type AdminCollection = keyof typeof adminCollections;

/** The PUT body of each admin collection: strict at every depth (an unknown key is a 400 naming its path). */
export const ADMIN_BODY_SCHEMAS = {
  configurations: z.strictObject(configurationSchema.shape),
  tasks: z.strictObject(taskSchema.shape),
  users: z.strictObject(userProfileSchema.shape),
  pages: z.strictObject(pageSchema.shape),
} as const;

const NO_SUCH_RESOURCE = 'No such admin resource.';
const MAX_ID_LENGTH = 200;

/**
 * Admin CRUD: `GET /admin/<collection>[/<id>]` (lists paged), `PUT /admin/<collection>/<id>`
 * (the body's id field must match the path), `DELETE /admin/configurations|tasks|users/<id>`. Grants are data: a
 * user's grants, page, language and tool access are written here, so an unknown field is
 * refused (a misspelt `toolAccess` must not silently grant nothing or keep an old value).
 */
async function routeAdmin(dependencies: AdminDependencies, request: HttpRequest): Promise<HttpResponse> {
  assertAdmin(request.principal);
  const [collection, id, ...rest] = (request.pathParameters.proxy ?? '').split('/').filter(Boolean);
  const method = request.method.toUpperCase();
  if (collection === 'skills')
    return routeSkills(dependencies, request, id === undefined ? [] : [id, ...rest]);
  if (!collection || !Object.hasOwn(adminCollections, collection) || rest.length > 0) {
    throw new CountersignError('not-found', NO_SUCH_RESOURCE);
  }
  const name = collection as AdminCollection;
  if (id !== undefined && id.length > MAX_ID_LENGTH) {
    throw new CountersignError('not-found', `No ${singular(name)} with this id.`);
  }
  if (method === 'GET' && id === undefined) {
    const query = parseInput(adminListQuerySchema, request.query, 'query');
    return { statusCode: 200, json: await listAdmin(dependencies, name, query) };
  }
  if (method === 'GET' && id !== undefined) {
    const item = await getAdmin(dependencies, name, id);
    if (item === undefined) throw new CountersignError('not-found', `No ${singular(name)} "${id}".`);
    return { statusCode: 200, json: item };
  }
  if (method === 'PUT' && id !== undefined) {
    const { idField } = adminCollections[name];
    const item = parseInput(ADMIN_BODY_SCHEMAS[name], request.body, 'body') as Record<string, unknown>;
    if (item[idField] !== id) {
      throw new CountersignError('bad-request', `body.${idField}: must equal the id in the path ("${id}").`, {
        field: `body.${idField}`,
      });
    }
    if (name === 'configurations' || name === 'tasks')
      await refuseUnreviewedSkillIds(dependencies, name, item);
    await putAdmin(dependencies, name, item);
    return { statusCode: 200, json: item };
  }
  if (method === 'DELETE' && id !== undefined && name === 'users') {
    if (!(await dependencies.users.deleteUser(id)))
      throw new CountersignError('not-found', `No user "${id}".`);
    return { statusCode: 200, json: { deleted: id } };
  }
  if (method === 'DELETE' && id !== undefined && (name === 'configurations' || name === 'tasks')) {
    await refuseWhileRunsWait(dependencies, name, id);
    const deleted =
      name === 'configurations'
        ? await dependencies.configurations.deleteConfiguration(id)
        : await dependencies.configurations.deleteTask(id);
    if (!deleted) throw new CountersignError('not-found', `No ${singular(name)} "${id}".`);
    return { statusCode: 200, json: { deleted: id } };
  }
  throw new CountersignError('not-found', NO_SUCH_RESOURCE);
}

function singular(name: AdminCollection): string {
  return name.slice(0, -1);
}

function assertAdmin(principal: UserProfile): void {
  if (!isAdmin(principal)) throw new CountersignError('forbidden', TEXTS.grantRefused('admin'));
}

async function getAdmin(
  dependencies: AdminDependencies,
  name: AdminCollection,
  id: string,
): Promise<unknown | undefined> {
  switch (name) {
    case 'configurations':
      return withUnknownKeys(await dependencies.configurations.inspectConfiguration(id));
    case 'tasks':
      return withUnknownKeys(await dependencies.configurations.inspectTask(id));
    case 'users':
      return dependencies.users.getUser(id);
    case 'pages':
      return dependencies.pages.getPage(id);
  }
}

async function listAdmin(
  dependencies: AdminDependencies,
  name: AdminCollection,
  query: PageRequest,
): Promise<{ items: unknown[]; cursor?: string }> {
  switch (name) {
    case 'configurations':
      return withUnknownKeysPage(await dependencies.configurations.inspectConfigurationsPage(query));
    case 'tasks':
      return withUnknownKeysPage(await dependencies.configurations.inspectTasksPage(query));
    case 'users':
      return dependencies.users.listUsersPage(query);
    case 'pages': {
      const { pages, cursor } = await dependencies.pages.listPages(query);
      return { items: pages, ...(cursor === undefined ? {} : { cursor }) };
    }
  }
}

/**
 * A configuration or task that waiting runs use is not deleted from under them: they could
 * neither resume nor be read back. The admin cancels those runs first (POST /runs/{id}/cancel).
 */
async function refuseWhileRunsWait(
  dependencies: AdminDependencies,
  name: 'configurations' | 'tasks',
  id: string,
): Promise<void> {
  let target: { configurationId: string } | { taskId: string; configurationId: string };
  if (name === 'configurations') target = { configurationId: id };
  else {
    const task = await dependencies.configurations.getTask(id);
    if (!task) return; // nothing to protect: the delete answers 404
    target = { taskId: id, configurationId: task.configurationId };
  }
  const waiting = await countWaitingRuns(dependencies, target);
  if (waiting > 0) {
    throw new CountersignError('conflict', TEXTS.deleteWhileRunsWait(singular(name), id, waiting));
  }
}

/**
 * A stored record with `unknownKeys` beside its fields when it carries keys today's schema does
 * not know: reported to the admin, never reinterpreted. A PUT refuses the field, so the admin
 * rewrites the record on purpose.
 */
function withUnknownKeysPage<Value extends object>(page: {
  items: StoredRecordReport<Value>[];
  cursor?: string;
}): { items: unknown[]; cursor?: string } {
  return { ...page, items: page.items.map(withUnknownKeys) };
}

function withUnknownKeys<Value extends object>(
  report: StoredRecordReport<Value> | undefined,
): (Value & { unknownKeys?: string[] }) | undefined {
  if (!report) return undefined;
  return report.unknownKeys.length > 0 ? { ...report.value, unknownKeys: report.unknownKeys } : report.value;
}

async function putAdmin(
  dependencies: AdminDependencies,
  name: AdminCollection,
  item: Record<string, unknown>,
): Promise<void> {
  switch (name) {
    case 'configurations':
      return dependencies.configurations.putConfiguration(configurationSchema.parse(item));
    case 'tasks':
      return dependencies.configurations.putTask(taskSchema.parse(item));
    case 'users':
      return dependencies.users.putUser(userProfileSchema.parse(item));
    case 'pages':
      return dependencies.pages.putPage(pageSchema.parse(item));
  }
}
