/**
 * The one route manifest: every HTTP route countersign serves, which function serves it and how
 * it is authenticated. The CDK API, the local server, the inbox page, the OpenAPI document and
 * the tests all read this table; none of them writes its own.
 */

/** The Lambda function behind a route (its construct id and bundle name). */
export type RouteFunction =
  | 'api-external'
  | 'api-runs'
  | 'api-inbox'
  | 'api-decision'
  | 'api-admin'
  | 'api-generate'
  | 'api-run-events'
  | 'slack-interactions';

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * How a route is authenticated, before any Lambda runs (API Gateway deployed, the local server
 * in `npm start`):
 * - `jwt`: a person's token (the JWT authorizer of the inbox's identity provider);
 * - `machine`: a machine client's access token (the OAuth client-credentials grant) carrying the
 *   {@link EXTERNAL_RUNS_SCOPE} scope, and nothing else: an agent that runs elsewhere
 *   (docs/external-agents.md). A person's token is refused here, and a machine's everywhere else;
 * - `none`: no token, so the route must hold no data.
 */
export type RouteAuth = 'jwt' | 'machine' | 'none' | 'slack-signature';

/**
 * The scope a machine client's access token must carry on `machine` routes: the resource server
 * `countersign` and its scope `external-runs`, as Cognito writes resource-server scopes.
 */
export const EXTERNAL_RUNS_SCOPE = 'countersign/external-runs';

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
   * `slack-signature`: no token either (Slack cannot send one); the function itself verifies
   * Slack's request signature before it reads anything, and acts only on a verified request.
   */
  readonly auth: RouteAuth;
  /**
   * The notification channel whose route this is: served only where the team switched the
   * channel on (a construct prop deployed, a runtime option locally); elsewhere it does not exist
   * (404). @default - always served
   */
  readonly channel?: 'slack';
  /**
   * How the route is reached when deployed. `function-url`: its own Lambda function URL, because an
   * HTTP API integration buffers the response and this route streams (server-sent events).
   * @default 'http-api'
   */
  readonly transport?: 'http-api' | 'function-url';
}

/**
 * The list, read and write routes of one admin collection, each its own manifest entry:
 * `list<Noun>s` (GET /admin/<collection>), `get<Noun>` and `put<Noun>` (GET and PUT
 * /admin/<collection>/{id}). The operationIds stay literal types, so each is still checked
 * against its handler and its OpenAPI operation.
 */
function adminCollectionRoutes<const Collection extends string, const Noun extends string>(
  collection: Collection,
  noun: Noun,
) {
  const item = `/admin/${collection}/{id}` as const;
  return [
    {
      operationId: `list${noun}s`,
      method: 'GET',
      path: `/admin/${collection}`,
      function: 'api-admin',
      auth: 'jwt',
    },
    { operationId: `get${noun}`, method: 'GET', path: item, function: 'api-admin', auth: 'jwt' },
    { operationId: `put${noun}`, method: 'PUT', path: item, function: 'api-admin', auth: 'jwt' },
  ] as const;
}

/** `delete<Noun>`: DELETE /admin/<collection>/{id}, for the collections whose items the API may delete. */
function adminDeleteRoute<const Collection extends string, const Noun extends string>(
  collection: Collection,
  noun: Noun,
) {
  return {
    operationId: `delete${noun}`,
    method: 'DELETE',
    path: `/admin/${collection}/{id}`,
    function: 'api-admin',
    auth: 'jwt',
  } as const;
}

export const ROUTES = [
  { operationId: 'startRun', method: 'POST', path: '/runs', function: 'api-runs', auth: 'jwt' },
  // Agents that run elsewhere submit their turns, wait for the answer and report what ran.
  {
    operationId: 'submitExternalRun',
    method: 'POST',
    path: '/external-runs',
    function: 'api-external',
    auth: 'machine',
  },
  {
    operationId: 'getExternalRun',
    method: 'GET',
    path: '/external-runs/{id}',
    function: 'api-external',
    auth: 'machine',
  },
  {
    operationId: 'reportExternalExecution',
    method: 'POST',
    path: '/external-runs/{id}/report',
    function: 'api-external',
    auth: 'machine',
  },
  { operationId: 'getRun', method: 'GET', path: '/runs/{id}', function: 'api-runs', auth: 'jwt' },
  { operationId: 'cancelRun', method: 'POST', path: '/runs/{id}/cancel', function: 'api-runs', auth: 'jwt' },
  // The run's signed hash chain of decisions, verifiable offline (docs/receipts.md).
  {
    operationId: 'getRunReceipt',
    method: 'GET',
    path: '/runs/{id}/receipt',
    function: 'api-runs',
    auth: 'jwt',
  },
  // History (issue #21): a run's audit, and what the signed-in user decided and started.
  { operationId: 'getRunAudit', method: 'GET', path: '/runs/{id}/audit', function: 'api-runs', auth: 'jwt' },
  { operationId: 'listMyDecisions', method: 'GET', path: '/me/decisions', function: 'api-runs', auth: 'jwt' },
  { operationId: 'listMyRuns', method: 'GET', path: '/me/runs', function: 'api-runs', auth: 'jwt' },
  {
    operationId: 'redriveRun',
    method: 'POST',
    path: '/runs/{id}/redrive',
    function: 'api-runs',
    auth: 'jwt',
  },
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
  // Delegation: an approver away names who decides their cards meanwhile (they or an admin).
  { operationId: 'setAway', method: 'PUT', path: '/users/{id}/away', function: 'api-decision', auth: 'jwt' },
  {
    operationId: 'clearAway',
    method: 'DELETE',
    path: '/users/{id}/away',
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
  // A card's own address: the same shell, which opens the run's card once signed in.
  {
    operationId: 'getCardPage',
    method: 'GET',
    path: '/inbox/runs/{id}',
    function: 'api-inbox',
    auth: 'none',
  },
  // The page's OAuth client library (oauth4webapi), pinned by the page's import map integrity. Its
  // path names no package: a bundle ships the library beside it only when its code names it.
  {
    operationId: 'getSignInLibrary',
    method: 'GET',
    path: '/assets/oauth-client.js',
    function: 'api-inbox',
    auth: 'none',
  },
  // The OpenAPI 3.1 document of this manifest: public, it describes shapes and holds no data.
  {
    operationId: 'getOpenApiDocument',
    method: 'GET',
    path: '/openapi.json',
    function: 'api-inbox',
    auth: 'none',
  },
  // The operators' runbook (docs/runbook.md as a page), which every alarm links to: public, no data.
  { operationId: 'getRunbook', method: 'GET', path: '/runbook', function: 'api-inbox', auth: 'none' },
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
  ...adminCollectionRoutes('configurations', 'Configuration'),
  adminDeleteRoute('configurations', 'Configuration'),
  ...adminCollectionRoutes('tasks', 'Task'),
  adminDeleteRoute('tasks', 'Task'),
  ...adminCollectionRoutes('users', 'User'),
  adminDeleteRoute('users', 'User'),
  // Pages belong to the content store: the API edits them and never deletes one.
  ...adminCollectionRoutes('pages', 'Page'),
  // Admin: which Slack user acts as which countersign user (docs/approvers.md, "Slack").
  ...adminCollectionRoutes('slack-users', 'SlackUser'),
  adminDeleteRoute('slack-users', 'SlackUser'),
  // Slack's interactivity Request URL: a button of a card's message, decided like the API.
  {
    operationId: 'receiveSlackInteraction',
    method: 'POST',
    path: '/integrations/slack/interactions',
    function: 'slack-interactions',
    auth: 'slack-signature',
    channel: 'slack',
  },
  // Admin: approver analytics, per group and per approver (issue #25; docs/runbook.md).
  {
    operationId: 'getApproverAnalytics',
    method: 'GET',
    path: '/admin/approver-analytics',
    function: 'api-admin',
    auth: 'jwt',
  },
  // Admin: skills (docs/skills.md): ingest, review, enable, attach.
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

/** The operations one function serves: the keys its route implementations must have. */
export type OperationOf<Function extends RouteFunction> = Extract<
  Route,
  { function: Function }
>['operationId'];

/** The routes one function answers. */
export function routesOfFunction(name: RouteFunction): Route[] {
  return ROUTES.filter((route) => route.function === name);
}

/** How a route is reached deployed (`http-api` unless the manifest says otherwise). */
export function transportOf(route: Route): 'http-api' | 'function-url' {
  return 'transport' in route ? route.transport : 'http-api';
}
