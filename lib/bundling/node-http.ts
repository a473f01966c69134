/**
 * Node's `http` module, bundled in place of `import ... from 'node:http'` (the alias is set in
 * `computeHandlerBundleSettings`, lib/functions.ts). An ES module import of a built-in makes Node
 * build its module facade, which reads every export, and `http`'s `WebSocket`, `CloseEvent`
 * and `MessageEvent` are getters that load undici: about 20 ms of a cold start, more than a
 * third of a hello-world DynamoDB Lambda's init (`npm run bench`). `require` reads only what
 * is used; the SDK's HTTP handler uses `Agent` and `request`.
 *
 * @example
 * // esbuild --alias:node:http=lib/bundling/node-http.ts
 * import { Agent, request } from 'node:http';
 */
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export default http;
export const {
  Agent,
  ClientRequest,
  IncomingMessage,
  METHODS,
  OutgoingMessage,
  STATUS_CODES,
  Server,
  ServerResponse,
  createServer,
  get,
  globalAgent,
  maxHeaderSize,
  request,
  validateHeaderName,
  validateHeaderValue,
} = http;
