import { SERVED_ROUTES, transportOf } from '../contract/served-routes.js';
import type { ApiHandlers } from '../handlers/api-handlers.js';
import type { LocalRoute } from './local-http-server.js';

/**
 * The local server's routes: exactly the manifest's served routes, each to the handler of its
 * function, authenticated as the manifest says. A `function-url` route streams, as deployed.
 */
export function localRoutesOf(handlers: ApiHandlers): LocalRoute[] {
  return SERVED_ROUTES.map((route): LocalRoute => {
    const common = { method: route.method, path: route.path, authentication: route.auth };
    if (transportOf(route) === 'function-url') {
      return { ...common, stream: true, handler: handlers['api-run-events'] };
    }
    return {
      ...common,
      handler: handlers[route.function as Exclude<typeof route.function, 'api-run-events'>],
    };
  });
}
