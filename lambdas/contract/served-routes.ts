import { ROUTES, type Route, type RouteFunction } from './routes.js';

/**
 * Manifest routes that no handler serves yet: routed nowhere (API Gateway and the local server
 * answer 404) rather than served by a stub that pretends. Today every route is served.
 */
export const UNSERVED_OPERATIONS = [] as const;

/** A manifest route some handler serves. */
export type ServedRoute = Exclude<Route, { operationId: (typeof UNSERVED_OPERATIONS)[number] }>;

/** The operations one function serves: the keys its route implementations must have. */
export type OperationOf<Function extends RouteFunction> = Extract<
  ServedRoute,
  { function: Function }
>['operationId'];

function isServed(route: Route): route is ServedRoute {
  return !(UNSERVED_OPERATIONS as readonly string[]).includes(route.operationId);
}

/** Every served route, in manifest order. */
export const SERVED_ROUTES: readonly ServedRoute[] = ROUTES.filter(isServed);

/** The served routes one function answers. */
export function routesOfFunction(name: RouteFunction): ServedRoute[] {
  return SERVED_ROUTES.filter((route) => route.function === name);
}

/** How a served route is reached deployed (`http-api` unless the manifest says otherwise). */
export function transportOf(route: Route): 'http-api' | 'function-url' {
  return 'transport' in route ? route.transport : 'http-api';
}
