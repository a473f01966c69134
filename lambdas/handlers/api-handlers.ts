import * as z from 'zod';
import { configurationSchema, taskSchema } from '../core/configurations.js';
import { CountersignError } from '../core/errors.js';
import { isAdmin, type UserProfile, userProfileSchema } from '../core/identity.js';
import { pageSchema } from '../core/pages.js';
import { decideRun, decisionRequestSchema } from '../core/runs/decide-run.js';
import { INBOX_PAGE_SIZE_DEFAULT, INBOX_PAGE_SIZE_MAX, listInbox } from '../core/runs/list-inbox.js';
import type { RunDependencies } from '../core/runs/run-dependencies.js';
import { startRun, startRunRequestSchema } from '../core/runs/start-run.js';
import { viewRun } from '../core/runs/view-run.js';
import { TEXTS } from '../core/texts.js';
import { badRequestFrom } from './http/http-errors.js';
import { createHttpHandler, type HttpRequest, type HttpResponse } from './http/http-route.js';
import { INBOX_PAGE_CSP, renderInboxCards, renderInboxPage } from './http/inbox-page.js';

/**
 * The four API Lambdas, as functions of their dependencies (AWS adapters deployed, local
 * stand-ins in `npm start`). Routes map to one use case each; no business rule lives here.
 */
export function createApiHandlers(dependencies: RunDependencies) {
  const edge = { users: dependencies.users, logger: dependencies.logger };
  return {
    runs: createHttpHandler(
      {
        'POST /runs': async (request) => {
          const outcome = await startRun(
            dependencies,
            request.principal,
            parse(startRunRequestSchema, request.body, 'body'),
          );
          return { statusCode: 202, json: { runId: outcome.runId, status: outcome.status } };
        },
        'GET /runs/{id}': async (request) => ({
          statusCode: 200,
          json: await viewRun(dependencies, request.principal, runIdOf(request)),
        }),
      },
      edge,
    ),
    inbox: createHttpHandler(
      {
        'GET /inbox': async (request) => {
          const query = parse(inboxQuerySchema, request.query, 'query');
          const page = await listInbox(dependencies, request.principal, query);
          if (/\btext\/html\b/.test(request.headers.accept ?? '')) {
            return { statusCode: 200, html: renderInboxCards(page.cards, page.cursor) };
          }
          return { statusCode: 200, json: page };
        },
        'GET /': async () => ({
          statusCode: 200,
          html: renderInboxPage(),
          headers: { 'content-security-policy': INBOX_PAGE_CSP },
        }),
      },
      edge,
      { publicRoutes: ['GET /'] },
    ),
    decision: createHttpHandler(
      {
        'POST /runs/{id}/decision': async (request) => {
          const body = parse(decisionRequestSchema, request.body ?? {}, 'body');
          const outcome = await decideRun(dependencies, request.principal, runIdOf(request), body);
          return { statusCode: 200, json: outcome };
        },
      },
      edge,
    ),
    admin: createHttpHandler({ 'ANY /admin/{proxy+}': (request) => routeAdmin(dependencies, request) }, edge),
  };
}

export type ApiHandlers = ReturnType<typeof createApiHandlers>;

const inboxQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(INBOX_PAGE_SIZE_MAX).default(INBOX_PAGE_SIZE_DEFAULT),
    cursor: z.string().min(1).max(2000).optional(),
  })
  .strict();

function parse<Schema extends z.ZodType>(schema: Schema, value: unknown, prefix: string): z.infer<Schema> {
  if (value === undefined && prefix === 'body') {
    throw new CountersignError('bad-request', 'body: a JSON object is required.', { field: 'body' });
  }
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw badRequestFrom(parsed.error, prefix);
  return parsed.data;
}

const runIdPattern = /^[A-Za-z0-9-]{1,100}$/;

function runIdOf(request: HttpRequest): string {
  const runId = request.pathParameters.id ?? '';
  // A malformed id cannot name a run: the same 404 as for an unknown one.
  if (!runIdPattern.test(runId)) throw new CountersignError('not-found', TEXTS.runNotFound);
  return runId;
}

const adminCollections = {
  configurations: { schema: configurationSchema, idField: 'configurationId' },
  tasks: { schema: taskSchema, idField: 'taskId' },
  users: { schema: userProfileSchema, idField: 'userId' },
  pages: { schema: pageSchema, idField: 'pageId' },
} as const;

/**
 * Admin CRUD: `GET /admin/<collection>`, `PUT /admin/<collection>/<id>` (the body's id field
 * must match the path), `DELETE /admin/configurations|tasks/<id>`.
 */
async function routeAdmin(dependencies: RunDependencies, request: HttpRequest): Promise<HttpResponse> {
  assertAdmin(request.principal);
  const [collection, id, ...rest] = (request.pathParameters.proxy ?? '').split('/').filter(Boolean);
  const method = request.method.toUpperCase();
  if (!collection || !(collection in adminCollections) || rest.length > 0) {
    throw new CountersignError('not-found', 'No such admin resource.');
  }
  const name = collection as keyof typeof adminCollections;
  if (method === 'GET' && id === undefined)
    return { statusCode: 200, json: { items: await listAdmin(dependencies, name) } };
  if (method === 'PUT' && id !== undefined) {
    const { schema, idField } = adminCollections[name];
    const item = parse(schema as z.ZodType, request.body, 'body') as Record<string, unknown>;
    if (item[idField] !== id) {
      throw new CountersignError('bad-request', `body.${idField}: must equal the id in the path ("${id}").`, {
        field: `body.${idField}`,
      });
    }
    await putAdmin(dependencies, name, item);
    return { statusCode: 200, json: item };
  }
  if (method === 'DELETE' && id !== undefined && (name === 'configurations' || name === 'tasks')) {
    const deleted =
      name === 'configurations'
        ? await dependencies.configurations.deleteConfiguration(id)
        : await dependencies.configurations.deleteTask(id);
    if (!deleted) throw new CountersignError('not-found', `No ${name.slice(0, -1)} "${id}".`);
    return { statusCode: 200, json: { deleted: id } };
  }
  throw new CountersignError('not-found', 'No such admin resource.');
}

function assertAdmin(principal: UserProfile): void {
  if (!isAdmin(principal)) throw new CountersignError('forbidden', TEXTS.grantRefused('admin'));
}

async function listAdmin(
  dependencies: RunDependencies,
  name: keyof typeof adminCollections,
): Promise<unknown[]> {
  switch (name) {
    case 'configurations':
      return dependencies.configurations.listConfigurations();
    case 'tasks':
      return dependencies.configurations.listTasks();
    case 'users':
      return dependencies.users.listUsers();
    case 'pages':
      return (await dependencies.pages.listPages({ limit: 100 })).pages;
  }
}

async function putAdmin(
  dependencies: RunDependencies,
  name: keyof typeof adminCollections,
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
