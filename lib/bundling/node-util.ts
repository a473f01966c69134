/**
 * Node's `util` module, bundled in place of `import ... from 'node:util'` for the reason given
 * in lib/bundling/node-http.ts: its ES module facade reads every export (about 2 ms of init).
 *
 * @example
 * // esbuild --alias:node:util=lib/bundling/node-util.ts
 * import { promisify } from 'node:util';
 */
import { createRequire } from 'node:module';

const util = createRequire(import.meta.url)('node:util') as typeof import('node:util');

export default util;
export const { TextDecoder, TextEncoder, deprecate, format, inspect, inherits, promisify, types } = util;
