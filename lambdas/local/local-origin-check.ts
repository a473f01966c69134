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
  const ownHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const host = request.headers.host?.toLowerCase();
  if (host === undefined || !ownHosts.has(host)) return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  return [...ownHosts].some((ownHost) => origin.toLowerCase() === `http://${ownHost}`);
}
