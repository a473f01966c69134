import type { IncomingMessage } from 'node:http';

/**
 * Whether a request to the local HTTP server came from its own page or a client on this
 * machine, not from a page of another site in the developer's browser. Two headers decide:
 * - `Host` must name the loopback address or `localhost` at the server's port, so a site whose
 *   name was rebound to 127.0.0.1 (DNS rebinding) is refused although the browser thinks it
 *   talks to that site;
 * - `Origin`, when a browser sent one, must be the server's own origin: any cross-site request
 *   (a form post, a `no-cors` fetch) is refused before routing, whatever it carries.
 * curl and the SDK send no `Origin` and the right `Host`, so scripts are unaffected.
 *
 * @example
 * if (!isOwnOrigin(request, 8787)) refuse(403, 'forbidden', TEXTS.localForeignOrigin);
 */
export function isOwnOrigin(request: Pick<IncomingMessage, 'headers'>, port: number): boolean {
  if (!isOwnHost(request, port)) return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  return ownHostsOf(port).some((ownHost) => origin.toLowerCase() === `http://${ownHost}`);
}

/**
 * The `Host` half of {@link isOwnOrigin}: the request names the loopback address or `localhost`
 * at `port`. For a local server that other local pages call across origins (the local sign-in
 * provider's token endpoint), which still refuses a rebound name.
 */
export function isOwnHost(request: Pick<IncomingMessage, 'headers'>, port: number): boolean {
  const host = request.headers.host?.toLowerCase();
  return host !== undefined && ownHostsOf(port).includes(host);
}

function ownHostsOf(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}
