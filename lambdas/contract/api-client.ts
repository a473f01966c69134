import type * as z from 'zod/mini';
import type * as zc from 'zod/v4/core';
import type { ErrorBody } from './common-schemas.js';
import type { ErrorStatus } from './route-definition.js';
import { type OperationId, ROUTES, type RouteOf, routeOf } from './routes.js';

/** The names in a path template: `/runs/{id}/calls/{index}` → `'id' | 'index'`. */
type PathParameterNames<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}`
  ? Name | PathParameterNames<Rest>
  : never;

type InputOf<Schema> = Schema extends zc.$ZodType ? z.input<Schema> : never;
type OutputOf<Schema> = Schema extends zc.$ZodType ? z.output<Schema> : never;

type PathPart<Id extends OperationId> = [PathParameterNames<RouteOf<Id>['path']>] extends [never]
  ? unknown
  : { readonly path: Readonly<Record<PathParameterNames<RouteOf<Id>['path']>, string | number>> };
type QueryPart<Id extends OperationId> =
  RouteOf<Id> extends { query: infer Query } ? { readonly query?: Partial<InputOf<Query>> } : unknown;
type BodyPart<Id extends OperationId> =
  RouteOf<Id> extends { body: infer Body }
    ? RouteOf<Id> extends { bodyOptional: true }
      ? { readonly body?: InputOf<Body> }
      : { readonly body: InputOf<Body> }
    : unknown;

/** What one call of an operation sends: its path parameters, query and body, typed from its schemas. */
export type ApiRequest<Id extends OperationId> = PathPart<Id> &
  QueryPart<Id> &
  BodyPart<Id> & {
    /** Extra headers, e.g. `accept: text/html` for the page's HTML answers. */
    readonly headers?: Readonly<Record<string, string>>;
    /** Aborts the request (a long poll the caller stops waiting for). */
    readonly signal?: AbortSignal;
  };

type Success<Id extends OperationId> = {
  [Status in keyof RouteOf<Id>['success'] & number]: {
    status: Status;
    ok: true;
    /** The parsed JSON body; `undefined` when the answer is HTML or a stream. */
    body: RouteOf<Id>['success'][Status] extends { json: infer Json }
      ? OutputOf<Json> | undefined
      : undefined;
  };
}[keyof RouteOf<Id>['success'] & number];

/** What an operation answered: a success body typed from its schema, or the error body. */
export type ApiResponse<Id extends OperationId> = (
  | Success<Id>
  | { status: ErrorStatus; ok: false; body: ErrorBody | undefined }
) & { text: string; headers: Headers };

/** A request whose every part is optional may be left out: `api.listInbox()`. */
type OperationMethod<Id extends OperationId> =
  Record<never, never> extends ApiRequest<Id>
    ? (request?: ApiRequest<Id>) => Promise<ApiResponse<Id>>
    : (request: ApiRequest<Id>) => Promise<ApiResponse<Id>>;

/** One method per operationId of the route manifest. */
export type ApiClient = { readonly [Id in OperationId]: OperationMethod<Id> } & {
  /**
   * Any request, as sent (a string body goes unchanged): for what the typed methods cannot say,
   * such as a malformed body or an unknown path. Same transport, same answers.
   */
  send(request: RawApiRequest): Promise<RawApiResponse>;
};

export interface RawApiRequest {
  readonly method: string;
  /** The path with its query, e.g. `/inbox?limit=5`. */
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sends this token instead of the client's (`''`: none). */
  readonly token?: string;
  readonly signal?: AbortSignal;
}

export interface RawApiResponse {
  status: number;
  ok: boolean;
  /** The body parsed as JSON, `undefined` when it is not JSON. */
  body: unknown;
  text: string;
  headers: Headers;
}

export interface ApiClientOptions {
  /** The API's base URL without a trailing slash, e.g. `https://abc.execute-api.eu-west-1.amazonaws.com`. */
  readonly baseUrl: string;
  /**
   * The bearer token, or a function that reads it per request (a machine client's, which fetches
   * a new one when the last expires, may be asynchronous).
   * @default - no token (only the public routes answer)
   */
  readonly token?: string | (() => string | undefined | Promise<string | undefined>);
  /**
   * The fetch to send with (tests pass one that checks every answer against the OpenAPI document).
   * @default globalThis.fetch
   */
  readonly fetch?: typeof fetch;
}

/**
 * A typed client of the API, derived from the route manifest and its schemas (no code is
 * generated): each operationId is a method whose path parameters, query, body and answer are
 * typed from the same schemas the handlers validate with and the OpenAPI document describes.
 *
 * @example
 * const api = createApiClient({ baseUrl, token });
 * const started = await api.startRun({ body: { taskId: 'page-metadata', input: 'Fix page 12' } });
 * if (started.status === 202) console.log(started.body?.runId);
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const send = (request: RawApiRequest) => sendApiRequest(options, request);
  const methods = Object.fromEntries(
    ROUTES.map((route) => [
      route.operationId,
      (request: OperationRequest = {}) =>
        send({
          method: route.method,
          path: `${fillPath(route.path, request.path ?? {})}${queryStringOf(request.query)}`,
          ...(request.body === undefined ? {} : { body: request.body }),
          ...(request.headers ? { headers: request.headers } : {}),
          ...(request.signal ? { signal: request.signal } : {}),
        }),
    ]),
  );
  return { ...methods, send } as unknown as ApiClient;
}

/** The untyped view of {@link ApiRequest} the transport works with. */
interface OperationRequest {
  path?: Readonly<Record<string, string | number>>;
  query?: Readonly<Record<string, unknown>>;
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
}

/** `/runs/{id}` with `{id: 'a b'}` → `/runs/a%20b`; a missing parameter is a programming error. */
export function fillPath(template: string, parameters: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{([A-Za-z]+)\}/g, (_match, name: string) => {
    const value = parameters[name];
    if (value === undefined) throw new TypeError(`The path ${template} needs the parameter "${name}".`);
    return encodeURIComponent(String(value));
  });
}

function queryStringOf(query: Readonly<Record<string, unknown>> | undefined): string {
  const entries = Object.entries(query ?? {}).filter(([, value]) => value !== undefined);
  return entries.length === 0
    ? ''
    : `?${new URLSearchParams(entries.map(([key, value]): [string, string] => [key, String(value)]))}`;
}

async function sendApiRequest(options: ApiClientOptions, request: RawApiRequest): Promise<RawApiResponse> {
  const token =
    request.token ?? (typeof options.token === 'function' ? await options.token() : options.token);
  const headers: Record<string, string> = { ...request.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  if (request.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await (options.fetch ?? fetch)(`${options.baseUrl}${request.path}`, {
    method: request.method,
    headers,
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.body === undefined
      ? {}
      : { body: typeof request.body === 'string' ? request.body : JSON.stringify(request.body) }),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, ok: response.ok, body, text, headers: response.headers };
}

/** The manifest's routes of the given operations, as the inbox page's script reads them. */
export function routeTableOf<Id extends OperationId>(
  operationIds: readonly Id[],
): Record<Id, { method: string; path: string }> {
  return Object.fromEntries(
    operationIds.map((operationId) => {
      const route = routeOf(operationId);
      return [operationId, { method: route.method, path: route.path }];
    }),
  ) as Record<Id, { method: string; path: string }>;
}
