import { readApproverAnalytics } from '../../core/analytics/read-approver-analytics.js';
import { slackUserMappingSchema } from '../../core/channels/slack-ports.js';
import { configurationSchema, type StoredRecordReport, taskSchema } from '../../core/configurations.js';
import { CountersignError } from '../../core/errors.js';
import { adminUserProfileSchema, isAdmin, type UserProfile, userProfileSchema } from '../../core/identity.js';
import { pageSchema } from '../../core/pages.js';
import type { PageRequest } from '../../core/ports.js';
import type { ReceiptDependencies } from '../../core/receipts/receipt-recording.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { countWaitingRuns } from '../../core/runs/count-waiting-runs.js';
import { TEXTS } from '../../core/texts.js';
import { NO_MCP_HOSTS, refuseDisallowedMcpServers } from '../../core/tools/mcp/mcp-host-policy.js';
import type { HttpRequest, RouteImplementations } from '../http/http-api.js';
import {
  createSkillsRoutes,
  refuseUnreviewedSkillIds,
  type SkillsRouteDependencies,
} from './skills-routes.js';

/** What the admin routes read and write: no sealer, no model (the admin Lambda bundles neither). */
export type AdminDependencies = Pick<
  RunDependencies,
  'configurations' | 'users' | 'slackUsers' | 'pages' | 'runs' | 'settings' | 'clock'
> & { receipts: Pick<ReceiptDependencies, 'responses'> } & SkillsRouteDependencies;

/** The field of each collection's record that must equal the path's id. */
const ID_FIELDS = {
  configurations: 'configurationId',
  tasks: 'taskId',
  users: 'userId',
  pages: 'pageId',
  'slack-users': 'slackUserId',
} as const;

type AdminCollection = keyof typeof ID_FIELDS;

/** A request to one record, `/admin/<collection>/{id}`: its id as the manifest's schema parsed it. */
type ItemRequest<Body = unknown> = HttpRequest<Body, unknown, { id: string }>;

/** The admin grant, checked by the admin API before any admin route reads its input. */
export function assertAdmin(principal: UserProfile): void {
  if (!isAdmin(principal)) throw new CountersignError('forbidden', TEXTS.grantRefused('admin'));
}

/**
 * Admin CRUD: `GET /admin/<collection>[/<id>]` (lists paged), `PUT /admin/<collection>/<id>`
 * (the body's id field must match the path), `DELETE /admin/configurations|tasks|users/<id>`, and
 * the skills routes. Grants are data: a user's grants, page, language and tool access are written
 * here, so an unknown field is refused (a misspelt `toolAccess` must not silently grant nothing
 * or keep an old value).
 */
export function createAdminRoutes(dependencies: AdminDependencies): RouteImplementations<'api-admin'> {
  const configurations = createCollectionRoutes(dependencies, 'configurations');
  const tasks = createCollectionRoutes(dependencies, 'tasks');
  const users = createCollectionRoutes(dependencies, 'users');
  const pages = createCollectionRoutes(dependencies, 'pages');
  const slackUsers = createCollectionRoutes(dependencies, 'slack-users');
  return {
    listConfigurations: configurations.list,
    getConfiguration: configurations.get,
    putConfiguration: configurations.put,
    deleteConfiguration: createDeleteRoute(dependencies, 'configurations'),
    listTasks: tasks.list,
    getTask: tasks.get,
    putTask: tasks.put,
    deleteTask: createDeleteRoute(dependencies, 'tasks'),
    listUsers: users.list,
    getUser: users.get,
    putUser: users.put,
    deleteUser: createDeleteRoute(dependencies, 'users'),
    listPages: pages.list,
    getPage: pages.get,
    putPage: pages.put,
    listSlackUsers: slackUsers.list,
    getSlackUser: slackUsers.get,
    putSlackUser: slackUsers.put,
    deleteSlackUser: createDeleteRoute(dependencies, 'slack-users'),
    ...createSkillsRoutes(dependencies),
    getApproverAnalytics: {
      handle: async (request) => ({
        statusCode: 200,
        json: await readApproverAnalytics(
          { responses: dependencies.receipts.responses, clock: dependencies.clock },
          request.principal,
          request.query,
        ),
      }),
    },
  };
}

function createCollectionRoutes(dependencies: AdminDependencies, name: AdminCollection) {
  const store = adminStoreOf(dependencies, name);
  return {
    list: {
      handle: async (request: HttpRequest<unknown, PageRequest>) => ({
        statusCode: 200,
        json: await store.list(request.query),
      }),
    },
    get: {
      handle: async (request: ItemRequest) => {
        const id = request.path.id;
        const item = await store.get(id);
        if (item === undefined)
          throw new CountersignError('not-found', TEXTS.adminRecordNotFound(singular(name), id));
        return { statusCode: 200, json: item };
      },
    },
    put: {
      // The body as the collection's strict schema in the manifest parsed it.
      handle: async (request: ItemRequest<Record<string, unknown>>) => {
        const id = request.path.id;
        const idField = ID_FIELDS[name];
        const item = request.body;
        if (item[idField] !== id) {
          throw new CountersignError('bad-request', TEXTS.adminIdMismatch(`body.${idField}`, id), {
            field: `body.${idField}`,
          });
        }
        if (name === 'configurations')
          refuseDisallowedMcpServers(
            configurationSchema.parse(item),
            dependencies.settings.mcpHostPolicy ?? NO_MCP_HOSTS,
          );
        if (name === 'configurations' || name === 'tasks')
          await refuseUnreviewedSkillIds(dependencies, name, item);
        await store.put(item);
        return { statusCode: 200, json: item };
      },
    },
  };
}

/** DELETE of a record the manifest lets an admin delete (pages have no delete). */
function createDeleteRoute(
  dependencies: AdminDependencies,
  name: 'configurations' | 'tasks' | 'users' | 'slack-users',
) {
  return {
    handle: async (request: ItemRequest) => {
      const id = request.path.id;
      if (name === 'configurations' || name === 'tasks') await refuseWhileRunsWait(dependencies, name, id);
      const deleted =
        name === 'users'
          ? await dependencies.users.deleteUser(id)
          : name === 'slack-users'
            ? await dependencies.slackUsers.deleteSlackUser(id)
            : name === 'configurations'
              ? await dependencies.configurations.deleteConfiguration(id)
              : await dependencies.configurations.deleteTask(id);
      if (!deleted) throw new CountersignError('not-found', TEXTS.adminRecordNotFound(singular(name), id));
      return { statusCode: 200, json: { deleted: id } };
    },
  };
}

function singular(name: AdminCollection): string {
  return name.slice(0, -1);
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

/** How one admin collection reads and writes its store; configurations and tasks report unknown keys. */
interface AdminStore {
  get(id: string): Promise<unknown | undefined>;
  list(query: PageRequest): Promise<{ items: unknown[]; cursor?: string }>;
  put(item: Record<string, unknown>): Promise<void>;
}

function adminStoreOf(
  { configurations, users, slackUsers, pages }: AdminDependencies,
  name: AdminCollection,
): AdminStore {
  switch (name) {
    case 'configurations':
      return {
        get: async (id) => withUnknownKeys(await configurations.inspectConfiguration(id)),
        list: async (query) => withUnknownKeysPage(await configurations.inspectConfigurationsPage(query)),
        put: (item) => configurations.putConfiguration(configurationSchema.parse(item)),
      };
    case 'tasks':
      return {
        get: async (id) => withUnknownKeys(await configurations.inspectTask(id)),
        list: async (query) => withUnknownKeysPage(await configurations.inspectTasksPage(query)),
        put: (item) => configurations.putTask(taskSchema.parse(item)),
      };
    case 'users':
      return {
        get: (id) => users.getUser(id),
        list: (query) => users.listUsersPage(query),
        put: (item) => users.putUser(userProfileSchema.parse(adminUserProfileSchema.parse(item))),
      };
    case 'pages':
      return {
        get: (id) => pages.getPage(id),
        list: async (query) => {
          const { pages: items, cursor } = await pages.listPages(query);
          return { items, ...(cursor === undefined ? {} : { cursor }) };
        },
        put: (item) => pages.putPage(pageSchema.parse(item)),
      };
    case 'slack-users':
      return {
        get: (id) => slackUsers.getSlackUser(id),
        list: (query) => slackUsers.listSlackUsersPage(query),
        put: (item) => slackUsers.putSlackUser(slackUserMappingSchema.parse(item)),
      };
  }
}
