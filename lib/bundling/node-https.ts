/**
 * Node's `https` module, bundled in place of `import ... from 'node:https'` for the reason
 * given in lib/bundling/node-http.ts: its ES module facade loads `http`'s undici getters.
 *
 * @example
 * // esbuild --alias:node:https=lib/bundling/node-https.ts
 * import { Agent, request } from 'node:https';
 */
import { createRequire } from 'node:module';

const https = createRequire(import.meta.url)('node:https') as typeof import('node:https');

export default https;
export const { Agent, Server, createServer, get, globalAgent, request } = https;
