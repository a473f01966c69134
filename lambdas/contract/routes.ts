/**
 * The one route manifest: every HTTP route countersign serves, which function serves it and how
 * it is authenticated. The CDK API, the local server, the inbox page, the OpenAPI document and
 * the tests all read this table; none of them writes its own.
 */

/** The Lambda function behind a route (its construct id and bundle name). */
export type RouteFunction =
  | 'api-runs'
  | 'api-inbox'
  | 'api-decision'
  | 'api-admin'
  | 'api-generate'
  | 'api-run-events';

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface RouteDefinition {
  /** A verb-first name, unique in the manifest: the OpenAPI operationId and the typed client's method. */
  readonly operationId: string;
  readonly method: RouteMethod;
  /** API Gateway's path syntax: `{name}` for one segment. */
  readonly path: string;
  readonly function: RouteFunction;
  /**
   * `jwt`: API Gateway's JWT authorizer (and the local issuer) refuses a request without a valid
   * token before any Lambda runs. `none`: no token, so the route must hold no data.
   */
  readonly auth: 'jwt' | 'none';
  /**
   * How the route is reached when deployed. `function-url`: its own Lambda function URL, because an
   * HTTP API integration buffers the response and this route streams (server-sent events).
   * @default 'http-api'
   */
  readonly transport?: 'http-api' | 'function-url';
}

export const ROUTES = [
  { operationId: 'startRun', method: 'POST', path: '/runs', function: 'api-runs', auth: 'jwt' },
  { operationId: 'getRun', method: 'GET', path: '/runs/{id}', function: 'api-runs', auth: 'jwt' },
  { operationId: 'cancelRun', method: 'POST', path: '/runs/{id}/cancel', function: 'api-runs', auth: 'jwt' },
  {
    operationId: 'streamRunEvents',
    method: 'GET',
    path: '/runs/{id}/events',
    function: 'api-run-events',
    auth: 'jwt',
    transport: 'function-url',
  },
  {
    operationId: 'decideRun',
    method: 'POST',
    path: '/runs/{id}/decision',
    function: 'api-decision',
    auth: 'jwt',
  },
  // The whole arguments of a call a card excerpts: the inbox's reader, with the inbox's reads.
  {
    operationId: 'getCall',
    method: 'GET',
    path: '/runs/{id}/calls/{index}',
    function: 'api-inbox',
    auth: 'jwt',
  },
  { operationId: 'listInbox', method: 'GET', path: '/inbox', function: 'api-inbox', auth: 'jwt' },
  // The page shell carries no data: it reads the inbox with the viewer's token.
  { operationId: 'getInboxPage', method: 'GET', path: '/', function: 'api-inbox', auth: 'none' },
  // The OpenAPI 3.1 document of this manifest: public, it describes shapes and holds no data.
  {
    operationId: 'getOpenApiDocument',
    method: 'GET',
    path: '/openapi.json',
    function: 'api-inbox',
    auth: 'none',
  },
  // Seed 003's configuration-driven completion and translation: synchronous, bounded below 30 s.
  {
    operationId: 'completeText',
    method: 'POST',
    path: '/configurations/{id}/complete',
    function: 'api-generate',
    auth: 'jwt',
  },
  {
    operationId: 'translateText',
    method: 'POST',
    path: '/configurations/{id}/translate',
    function: 'api-generate',
    auth: 'jwt',
  },
  // Admin: configurations, tasks, users and pages (GET lists are paged with ?limit=&cursor=).
  {
    operationId: 'listConfigurations',
    method: 'GET',
    path: '/admin/configurations',
    function: 'api-admin',
    auth: 'jwt',
  },
  {
    operationId: 'getConfiguration',
    method: 'GET',
    path: '/admin/configurations/{id}',
    function: 'api-admin',
    auth: 'jwt',
  },
  {
    operationId: 'putConfiguration',
    method: 'PUT',
    path: '/admin/configurations/{id}',
    function: 'api-admin',
    auth: 'jwt',
  },
  {
    operationId: 'deleteConfiguration',
    method: 'DELETE',
    path: '/admin/configurations/{id}',
    function: 'api-admin',
    auth: 'jwt',
  },
  { operationId: 'listTasks', method: 'GET', path: '/admin/tasks', function: 'api-admin', auth: 'jwt' },
  { operationId: 'getTask', method: 'GET', path: '/admin/tasks/{id}', function: 'api-admin', auth: 'jwt' },
  { operationId: 'putTask', method: 'PUT', path: '/admin/tasks/{id}', function: 'api-admin', auth: 'jwt' },
  {
    operationId: 'deleteTask',
    method: 'DELETE',
    path: '/admin/tasks/{id}',
    function: 'api-admin',
    auth: 'jwt',
  },
  { operationId: 'listUsers', method: 'GET', path: '/admin/users', function: 'api-admin', auth: 'jwt' },
  { operationId: 'getUser', method: 'GET', path: '/admin/users/{id}', function: 'api-admin', auth: 'jwt' },
  { operationId: 'putUser', method: 'PUT', path: '/admin/users/{id}', function: 'api-admin', auth: 'jwt' },
  {
    operationId: 'deleteUser',
    method: 'DELETE',
    path: '/admin/users/{id}',
    function: 'api-admin',
    auth: 'jwt',
  },
  { operationId: 'listPages', method: 'GET', path: '/admin/pages', function: 'api-admin', auth: 'jwt' },
  { operationId: 'getPage', method: 'GET', path: '/admin/pages/{id}', function: 'api-admin', auth: 'jwt' },
  { operationId: 'putPage', method: 'PUT', path: '/admin/pages/{id}', function: 'api-admin', auth: 'jwt' },
  // Admin: skills (seed 003): ingest, review, enable, attach.
  { operationId: 'listSkills', method: 'GET', path: '/admin/skills', function: 'api-admin', auth: 'jwt' },
  {
    operationId: 'getSkill',
    method: 'GET',
    path: '/admin/skills/{skillId}',
    function: 'api-admin',
    auth: 'jwt',
  },
  {
    operationId: 'ingestSkills',
    method: 'POST',
    path: '/admin/skills/ingest',
    function: 'api-admin',
    auth: 'jwt',
  },
  {
    operationId: 'enableSkill',
    method: 'POST',
    path: '/admin/skills/{skillId}/enable',
    function: 'api-admin',
    auth: 'jwt',
  },
  {
    operationId: 'disableSkill',
    method: 'POST',
    path: '/admin/skills/{skillId}/disable',
    function: 'api-admin',
    auth: 'jwt',
  },
  {
    operationId: 'attachSkills',
    method: 'PUT',
    path: '/admin/skills/attachments/{owner}/{id}',
    function: 'api-admin',
    auth: 'jwt',
  },
] as const satisfies readonly RouteDefinition[];

export type Route = (typeof ROUTES)[number];
export type OperationId = Route['operationId'];

/** API Gateway's route key of a route: `METHOD /path`. */
export function routeKeyOf(route: Pick<RouteDefinition, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}
