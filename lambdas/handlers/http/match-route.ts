import { CountersignError } from '../../core/errors.js';
import { TEXTS } from '../../core/texts.js';

/** A route as API Gateway matches it: a method and a path template (`/runs/{id}`). */
export interface MatchableRoute {
  /** HTTP method in upper case (`GET`, `POST`, ...). */
  readonly method: string;
  /** API Gateway path template: `{name}` for one segment, `{name+}` for a greedy last segment. */
  readonly path: string;
}

export type RouteMatch<Route extends MatchableRoute> =
  | { kind: 'matched'; route: Route; routeKey: string; pathParameters: Record<string, string> }
  | { kind: 'not-found' }
  | { kind: 'method-not-allowed'; allowedMethods: string[] }
  | { kind: 'bad-path' };

/** What the edge answers a request no route matched: status, error code and message. */
export interface UnmatchedRefusal {
  readonly statusCode: number;
  readonly code: string;
  readonly message: string;
}

/**
 * API Gateway's answer to a request it routes nowhere, one table for the function URL and the
 * local server alike: an unknown path 404, an undecodable one 400, a known path with another method 405.
 */
export function refusalOfUnmatched(
  match: Exclude<RouteMatch<MatchableRoute>, { kind: 'matched' }>,
): UnmatchedRefusal {
  switch (match.kind) {
    case 'not-found':
      return { statusCode: 404, code: 'not-found', message: TEXTS.routeNotFound };
    case 'bad-path':
      return { statusCode: 400, code: 'bad-request', message: TEXTS.requestPathInvalid };
    case 'method-not-allowed':
      return {
        statusCode: 405,
        code: 'method-not-allowed',
        message: TEXTS.methodNotAllowed(match.allowedMethods),
      };
  }
}

interface CompiledRoute<Route extends MatchableRoute> {
  readonly route: Route;
  readonly segments: readonly string[];
  /** Literal segments count: the more, the more specific, as API Gateway prefers. */
  readonly specificity: number;
}

/**
 * API Gateway's own route selection, in front of the handlers: the local HTTP server and the
 * function URL (which has no API Gateway) answer an unknown path 404 and a known path with
 * another method 405 before any handler runs. Inside a Lambda, middy's router dispatches.
 *
 * @example
 * const match = createRouteMatcher(routes)('GET', '/runs/r1');
 * if (match.kind === 'matched') match.pathParameters.id; // 'r1'
 */
export function createRouteMatcher<Route extends MatchableRoute>(
  routes: readonly Route[],
): (method: string, rawPath: string) => RouteMatch<Route> {
  const compiled = routes.map(compileRoute);
  const identities = new Set<string>();
  for (const { route, segments } of compiled) {
    const identity = `${route.method} ${segments.map((s) => (isParameter(s) ? '{}' : s)).join('/')}`;
    if (identities.has(identity)) {
      throw new CountersignError('configuration', `Two routes serve ${route.method} ${route.path}.`);
    }
    identities.add(identity);
  }
  return (method, rawPath) => {
    const pathSegments = rawPath.split('/').slice(1);
    const candidates: Array<{ route: CompiledRoute<Route>; pathParameters: Record<string, string> }> = [];
    for (const route of compiled) {
      const matched = matchSegments(route.segments, pathSegments);
      if (matched === 'bad-path') return { kind: 'bad-path' };
      if (matched) candidates.push({ route, pathParameters: matched });
    }
    if (candidates.length === 0) return { kind: 'not-found' };
    const sameMethod = candidates.filter((candidate) => candidate.route.route.method === method);
    if (sameMethod.length === 0) {
      const allowedMethods = [...new Set(candidates.map((candidate) => candidate.route.route.method))].sort();
      return { kind: 'method-not-allowed', allowedMethods };
    }
    sameMethod.sort((left, right) => right.route.specificity - left.route.specificity);
    const best = sameMethod[0] as (typeof sameMethod)[number];
    const { route } = best.route;
    return {
      kind: 'matched',
      route,
      routeKey: `${route.method} ${route.path}`,
      pathParameters: best.pathParameters,
    };
  };
}

function compileRoute<Route extends MatchableRoute>(route: Route): CompiledRoute<Route> {
  if (!route.path.startsWith('/')) {
    throw new CountersignError('configuration', `Route path "${route.path}" must start with "/".`);
  }
  const segments = route.path.split('/').slice(1);
  segments.forEach((segment, index) => {
    if (segment.endsWith('+}') && index !== segments.length - 1) {
      throw new CountersignError(
        'configuration',
        `Greedy parameter in "${route.path}" must be the last segment.`,
      );
    }
  });
  return { route, segments, specificity: segments.filter((segment) => !isParameter(segment)).length };
}

function isParameter(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}

function matchSegments(
  template: readonly string[],
  pathSegments: readonly string[],
): Record<string, string> | undefined | 'bad-path' {
  const parameters: Record<string, string> = {};
  for (let index = 0; index < template.length; index += 1) {
    const expected = template[index] as string;
    const actual = pathSegments[index];
    if (actual === undefined) return undefined;
    if (!isParameter(expected)) {
      if (expected !== actual) return undefined;
      continue;
    }
    const greedy = expected.endsWith('+}');
    const name = expected.slice(1, greedy ? -2 : -1);
    const raw = greedy ? pathSegments.slice(index).join('/') : actual;
    if (raw.length === 0) return undefined;
    try {
      parameters[name] = decodeURIComponent(raw);
    } catch {
      return 'bad-path';
    }
    if (greedy) return parameters;
  }
  return pathSegments.length === template.length ? parameters : undefined;
}
