import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';

/** An HTTP API payload v2 event whose route carries API Gateway's JWT authorizer. */
export type HttpApiEvent = APIGatewayProxyEventV2WithJWTAuthorizer;
type JwtAuthorizer = HttpApiEvent['requestContext']['authorizer'];

/** API Gateway hands claims over flattened: every value a string, arrays as `[a b]`. */
export function flattenClaims(claims: Readonly<Record<string, unknown>>): Record<string, string> {
  const flattened: Record<string, string> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) flattened[name] = `[${value.map(String).join(' ')}]`;
    else if (typeof value === 'object' && value !== null) flattened[name] = JSON.stringify(value);
    else flattened[name] = String(value);
  }
  return flattened;
}

/**
 * The authorizer context API Gateway's JWT authorizer gives a route, from a verified token's
 * claims. The function URL and the local server build it alike, so one claim-reading code path
 * (`identifyPrincipal`) serves every route.
 */
export function jwtAuthorizerOf(claims: Readonly<Record<string, unknown>>): JwtAuthorizer {
  const scope = claims.scope;
  return {
    principalId: '',
    integrationLatency: 0,
    jwt: {
      claims: flattenClaims(claims),
      scopes: typeof scope === 'string' ? scope.split(' ').filter((item) => item.length > 0) : [],
    },
  };
}

/** What a request carries, whoever received it (node:http locally, a function URL deployed). */
export interface HttpApiEventInput {
  readonly method: string;
  readonly rawPath: string;
  readonly rawQueryString: string;
  /** Lower-case names; repeated headers already joined with commas, as API Gateway does. */
  readonly headers: Readonly<Record<string, string>>;
  readonly routeKey: string;
  readonly requestId: string;
  readonly pathParameters: Readonly<Record<string, string>>;
  readonly body: string;
  /** The verified token's claims; absent on a route without authentication (no authorizer then). */
  readonly claims?: Readonly<Record<string, unknown>>;
  readonly sourceIp: string;
  readonly protocol: string;
  readonly time: Date;
}

/**
 * A faithful HTTP API payload v2 event: what the deployed handlers receive from API Gateway.
 *
 * @example
 * const event = buildHttpApiEvent({ method: 'GET', rawPath: '/runs/r1', routeKey: 'GET /runs/{id}', ... });
 */
export function buildHttpApiEvent(input: HttpApiEventInput): HttpApiEvent {
  const headers = { ...input.headers };
  const cookies = (headers.cookie ?? '')
    .split(/[;,]/)
    .map((cookie) => cookie.trim())
    .filter((cookie) => cookie.length > 0);
  const queryStringParameters: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(input.rawQueryString)) {
    const existing = queryStringParameters[name];
    queryStringParameters[name] = existing === undefined ? value : `${existing},${value}`;
  }
  const domainName = (headers.host ?? 'localhost').replace(/:\d+$/, '');
  const requestContext = {
    accountId: '000000000000',
    apiId: 'local',
    domainName,
    domainPrefix: domainName.split('.')[0] ?? domainName,
    http: {
      method: input.method,
      path: input.rawPath,
      protocol: input.protocol,
      sourceIp: input.sourceIp,
      userAgent: headers['user-agent'] ?? '',
    },
    requestId: input.requestId,
    routeKey: input.routeKey,
    stage: '$default',
    time: formatRequestTime(input.time),
    timeEpoch: input.time.getTime(),
    // Routes without an authorizer carry none, as deployed; the cast keeps one event type.
    ...(input.claims ? { authorizer: jwtAuthorizerOf(input.claims) } : {}),
  } as HttpApiEvent['requestContext'];
  const event: HttpApiEvent = {
    version: '2.0',
    routeKey: input.routeKey,
    rawPath: input.rawPath,
    rawQueryString: input.rawQueryString,
    headers,
    requestContext,
    isBase64Encoded: false,
  };
  if (cookies.length > 0) event.cookies = cookies;
  if (Object.keys(queryStringParameters).length > 0) event.queryStringParameters = queryStringParameters;
  if (Object.keys(input.pathParameters).length > 0) event.pathParameters = { ...input.pathParameters };
  if (input.body.length > 0) event.body = input.body;
  return event;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `12/Mar/2020:19:03:58 +0000`, the format of `requestContext.time`. */
function formatRequestTime(date: Date): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  return (
    `${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
}
