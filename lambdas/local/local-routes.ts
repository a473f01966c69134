import { ROUTES, transportOf } from '../contract/routes.js';
import type { ApiHandlers } from '../handlers/api-handlers.js';
import type { HttpLambdaHandler } from '../handlers/http/http-api.js';
import type { LocalRoute } from './local-http-server.js';

/** The handlers of the channels' routes a runtime serves; a channel switched off has none. */
export interface ChannelRouteHandlers {
  readonly 'slack-interactions'?: HttpLambdaHandler;
}

/**
 * The local server's routes: exactly the manifest's served routes, each to the handler of its
 * function, authenticated as the manifest says. A `function-url` route streams, as deployed; a
 * channel's route exists only when its channel is on (otherwise a 404, as deployed), and
 * authenticates its requests itself (Slack's signature: no token).
 */
export function localRoutesOf(handlers: ApiHandlers, channels: ChannelRouteHandlers = {}): LocalRoute[] {
  return ROUTES.flatMap((route): LocalRoute[] => {
    const common = {
      method: route.method,
      path: route.path,
      // Slack's route has no token to check: its handler checks Slack's signature.
      authentication: route.auth === 'slack-signature' ? ('none' as const) : route.auth,
    };
    if (route.function === 'slack-interactions') {
      const handler = channels[route.function];
      return handler === undefined ? [] : [{ ...common, handler }];
    }
    if (transportOf(route) === 'function-url') {
      return [{ ...common, stream: true, handler: handlers['api-run-events'] }];
    }
    return [
      { ...common, handler: handlers[route.function as Exclude<typeof route.function, 'api-run-events'>] },
    ];
  });
}
