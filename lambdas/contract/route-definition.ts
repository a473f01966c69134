import type * as zc from 'zod/v4/core';

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

/** What a successful answer carries: a JSON body, and/or HTML for the page, or a server-sent event stream. */
export interface SuccessContent {
  readonly description: string;
  readonly json?: zc.$ZodType;
  /** The same data as escaped HTML, for a request that sends `Accept: text/html` (the inbox page). */
  readonly html?: string;
  /** `text/event-stream`: one `event:` and one JSON `data:` line per event, each event as this schema reads it. */
  readonly eventStream?: { readonly description: string; readonly event: zc.$ZodType };
  /** `text/javascript`: a script module the page loads (its description). */
  readonly script?: string;
}

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 429 | 500 | 502 | 503 | 504;

/**
 * One operation of the API, written once: where it is served and how it is authenticated (what
 * the CDK API and the local server read), the schemas the router validates its input with before
 * its handler runs, and what it answers (what the OpenAPI document and the typed client read).
 */
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
  readonly summary: string;
  /**
   * The path parameters: the router parses them (after the body and the query, as an unknown id
   * is only found out after them) and `handle` receives them typed; the document describes them.
   */
  readonly pathParameters?: zc.$ZodObject;
  /**
   * How a path parameter its schema refuses is answered, by name, checked in the schema's order.
   * @default - a 400 naming `path.<name>`
   */
  readonly pathRefusals?: Readonly<Record<string, PathParameterRefusal>>;
  readonly query?: zc.$ZodObject;
  readonly body?: zc.$ZodType;
  /** Whether the body may be left out: a missing one reads as `{}` (a bare POST). @default false */
  readonly bodyOptional?: boolean;
  /** How the body is sent. @default 'application/json' */
  readonly bodyMediaType?: 'application/json' | 'application/x-www-form-urlencoded';
  readonly success: Readonly<Partial<Record<200 | 202, SuccessContent>>>;
  /** Refusals beyond the ones every route can answer (see {@link errorStatusesOf}). */
  readonly errors?: readonly ErrorStatus[];
  /**
   * The 200 carries an `ETag`; a request whose `If-None-Match` names it gets 304 with no body,
   * so a page that polls pays no transfer while nothing changed.
   * @default false
   */
  readonly conditional?: boolean;
  /** A refusal whose body says more than `{"error": {"code", "message"}}`, by status. */
  readonly errorBodies?: Readonly<Partial<Record<ErrorStatus, { description: string; json: zc.$ZodType }>>>;
}

/** The path parameters a refusal message may name (as the request sent them, unchecked). */
export type RawPathParameters = Readonly<Record<string, string | undefined>>;

/**
 * How a route refuses a path parameter its schema does not accept:
 * - `not-found`: exactly as an unknown resource (404 and its message), so a malformed id tells a
 *   caller nothing an unknown one would not;
 * - `bad-request`: a 400 with this message, naming the parameter;
 * - `unread`: never refused, because the route answers every value alike (the page shell, whose
 *   script reads its own address).
 */
export type PathParameterRefusal =
  | { readonly kind: 'not-found'; readonly message: string | ((path: RawPathParameters) => string) }
  | { readonly kind: 'bad-request'; readonly message: string }
  | { readonly kind: 'unread' };

/** A malformed path parameter answered as an unknown resource: a 404 with the unknown one's message. */
export const asUnknown = (message: string | ((path: RawPathParameters) => string)) =>
  ({ kind: 'not-found', message }) as const;

/** A success answered as JSON, described. */
export const json = <Schema extends zc.$ZodType>(description: string, schema: Schema) => ({
  description,
  json: schema,
});

/** A success answered as JSON, and as the same data in escaped HTML for the page. */
export const withHtml = <Schema extends zc.$ZodType>(description: string, schema: Schema, html: string) => ({
  description,
  json: schema,
  html,
});

/**
 * The refusals an operation may answer: those of every route (bad input or path, unknown
 * resource, body too large, throttled, an internal failure, a service countersign depends on
 * busy or unavailable), the token's and the grant's on authenticated routes, and the operation's own.
 */
export function errorStatusesOf(route: Pick<RouteDefinition, 'auth' | 'errors'>): ErrorStatus[] {
  const common: ErrorStatus[] = [400, 404, 413, 429, 500, 503];
  const authenticated: ErrorStatus[] = route.auth === 'none' ? [] : [401, 403];
  return [...new Set([...common, ...authenticated, ...(route.errors ?? [])])].sort((a, b) => a - b);
}

/**
 * The media types a route answers, JSON first, when it answers more than one (`Accept` picks):
 * the reads whose success is JSON and the same data as escaped HTML for the page.
 */
export function mediaTypesOf(
  route: Pick<RouteDefinition, 'success'>,
): readonly [string, ...string[]] | undefined {
  const content = route.success[200];
  return content?.json && content.html ? ['application/json', 'text/html'] : undefined;
}
